"""The question bassi asks before the agent runs a tool the user has not allowed yet.

People must see which server acts and with what, so the modal shows the server (and how it
is reached), the tool, and the arguments, before any choice. Every choice has a key; Esc
denies, the safe default.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from bassi.core.runtime import ApprovalDecision, ApprovalRequest
from bassi.ui.safe import plain, plain_line
from bassi.ui.widgets.tool_call import format_arguments

ARGUMENTS_CHARS = 4_000


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('allow_once')", "Allow once"),
        Binding("t", "decide('always_tool')", "Always this tool"),
        Binding("s", "decide('always_server')", "Always this server"),
        Binding("d,escape", "decide('deny')", "Deny"),
    ]

    def __init__(self, request: ApprovalRequest, *, server_target: str = "") -> None:
        super().__init__(classes="approval-screen")
        self.request = request
        self.server_target = server_target

    def compose(self) -> ComposeResult:
        tool = self.request.tool
        with Vertical(classes="approval-dialog") as dialog:
            dialog.border_title = Content("Allow this tool call?")
            yield Static(
                Content("").join(
                    [
                        Content("The agent wants to run "),
                        plain_line(tool.name, 80, "bold"),
                        Content(" on server "),
                        plain_line(tool.server, 64, "bold $text-warning"),
                    ]
                ),
                classes="approval-what",
            )
            if self.server_target:
                yield Static(
                    Content.styled("server runs as: ", "$foreground-muted")
                    + plain_line(self.server_target, 200),
                    classes="approval-target",
                )
            yield Static(
                plain_line(tool.summary, 200, "$foreground-muted"), classes="approval-summary"
            )
            with VerticalScroll(classes="approval-arguments"):
                arguments = format_arguments(self.request.arguments) or "(no arguments)"
                yield Static(plain(arguments, max_chars=ARGUMENTS_CHARS))
            with Horizontal(classes="approval-buttons"):
                yield Button(Content("Allow once [a]"), id="allow_once", variant="primary")
                yield Button(Content("Always this tool [t]"), id="always_tool")
                yield Button(Content("Always this server [s]"), id="always_server")
                yield Button(Content("Deny [d]"), id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(ApprovalDecision(choice))
