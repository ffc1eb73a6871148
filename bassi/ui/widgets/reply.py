"""What the assistant replies: streamed Markdown.

A module of its own so that the Markdown widget and its parser (markdown-it, pygments for
code fences: about a tenth of bassi's start-up) load when the first reply arrives, not
before the first screen is painted.
"""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from bassi.core.safe_text import clean


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
