"""The blocks a conversation is made of: what the user said, what the assistant replies
(streamed Markdown), and notices from bassi itself."""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from bassi.core.safe_text import clean
from bassi.ui.safe import plain, plain_line

NoticeLevel = Literal["info", "warning", "error"]


class UserMessage(Static):
    """The user's message, echoed as typed (plain text: people paste brackets too)."""

    def __init__(self, text: str) -> None:
        super().__init__(plain(text), classes="user-message")


class AssistantMessage(Markdown):
    """One stretch of the assistant's reply, appended to as deltas arrive (or given whole,
    when an earlier conversation is shown again).

    Deltas go through a ``MarkdownStream``, which batches fragments that arrive faster than
    the widget can render and only re-parses the last block, so a long reply neither flickers
    nor re-renders from the top on every token. The reply is never printed again when the
    turn completes: the deltas are the text.
    """

    def __init__(self, markdown: str | None = None) -> None:
        """``markdown``: a whole reply from an earlier conversation, shown at once."""
        super().__init__(clean(markdown) if markdown else None, classes="assistant-message")
        self._stream: MarkdownStream | None = None

    async def write(self, fragment: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(clean(fragment))

    async def finish(self) -> None:
        """Flush what is pending; later text goes to a new message."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


class Notice(Static):
    """A message from bassi: help, results of commands, warnings and errors."""

    def __init__(self, content: Content | str, level: NoticeLevel = "info") -> None:
        body = content if isinstance(content, Content) else Content(content)
        super().__init__(body, classes=f"notice -{level}")


class CommandEcho(Static):
    """A slash command as it was typed, above its output, so outputs can be told apart."""

    def __init__(self, line: str) -> None:
        super().__init__(plain_line(line, 200), classes="command-echo")
