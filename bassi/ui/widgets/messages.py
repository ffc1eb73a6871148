"""The blocks a conversation is made of: what the user said and notices from bassi itself
(what the assistant replies is in ``reply``)."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

from bassi.ui.safe import plain, plain_line

NoticeLevel = Literal["info", "warning", "error"]


class UserMessage(Static):
    """The user's message, echoed as typed (plain text: people paste brackets too)."""

    def __init__(self, text: str) -> None:
        super().__init__(plain(text), classes="user-message")


class Notice(Static):
    """A message from bassi: help, results of commands, warnings and errors."""

    def __init__(self, content: Content | str, level: NoticeLevel = "info") -> None:
        body = content if isinstance(content, Content) else Content(content)
        super().__init__(body, classes=f"notice -{level}")


class CommandEcho(Static):
    """A slash command as it was typed, above its output, so outputs can be told apart."""

    def __init__(self, line: str) -> None:
        super().__init__(plain_line(line, 200), classes="command-echo")
