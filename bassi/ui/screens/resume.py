"""Pick an earlier conversation in this directory to continue."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from bassi.ui.safe import plain_line

if TYPE_CHECKING:
    from claude_agent_sdk import SDKSessionInfo


def when(milliseconds: int) -> str:
    """A session's time (the SDK gives epoch milliseconds), local, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(milliseconds / 1000))


def session_title(session: SDKSessionInfo) -> str:
    return session.custom_title or session.summary or session.first_prompt or session.session_id


class ResumeScreen(ModalScreen["SDKSessionInfo | None"]):
    """Newest first; Enter resumes the highlighted one, Esc keeps the current conversation."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, sessions: Sequence[SDKSessionInfo]) -> None:
        super().__init__(classes="resume-screen")
        self.sessions = list(sessions)

    def compose(self) -> ComposeResult:
        with Vertical(classes="resume-dialog") as dialog:
            dialog.border_title = Content("Resume a conversation")
            yield OptionList(
                *(
                    Option(
                        Content.styled(when(s.last_modified), "$foreground-muted")
                        + Content("  ")
                        + plain_line(session_title(s), 100),
                        id=s.session_id,
                    )
                    for s in self.sessions
                )
            )

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[event.option_index])
