"""Turns the agent's event stream into blocks in the chat log.

One ``Transcript`` per turn: text deltas stream into the current assistant message, a tool
call closes it and gets its own block, the result fills that block in, and text after the
tool call starts a new message. Each piece of text is shown exactly once. ``replayed`` builds
the same blocks for an earlier conversation, whole rather than streamed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widget import Widget

from bassi.core.events import (
    AgentError,
    AgentEvent,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from bassi.core.history import HistoryItem, UserText
from bassi.ui.safe import plain
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.messages import Notice, UserMessage
from bassi.ui.widgets.tool_call import ToolCallBlock

if TYPE_CHECKING:
    from bassi.ui.widgets.reply import AssistantMessage


@dataclass
class SessionTotals:
    """What ``/cost`` and the status bar report for this session."""

    turns: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    duration_ms: int = 0

    @property
    def tokens(self) -> int:
        """Every token the model read or wrote: with prompt caching most of the input is
        cache reads, which ``input_tokens`` alone leaves out."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_creation_tokens
        )

    def add(self, turn: TurnFinished) -> None:
        self.turns += 1
        self.cost_usd += turn.cost_usd or 0.0
        self.input_tokens += turn.input_tokens
        self.output_tokens += turn.output_tokens
        self.cache_read_tokens += turn.cache_read_tokens
        self.cache_creation_tokens += turn.cache_creation_tokens
        self.duration_ms += turn.duration_ms


def assistant_message(text: str | None = None) -> AssistantMessage:
    """A block for the assistant's reply. Its module (the Markdown widget and its parser)
    loads here, at the first reply, rather than before the first screen is painted."""
    from bassi.ui.widgets.reply import AssistantMessage

    return AssistantMessage(text)


class Transcript:
    def __init__(self, log: ChatLog, totals: SessionTotals) -> None:
        self.log = log
        self.totals = totals
        self._message: AssistantMessage | None = None
        self._calls: dict[str, ToolCallBlock] = {}

    async def show(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            if self._message is None:
                self._message = assistant_message()
                await self.log.add(self._message)
            await self._message.write(event.text)
        elif isinstance(event, ToolCallStarted):
            await self.close_message()
            block = ToolCallBlock.of(event)
            self._calls[event.id] = block
            await self.log.add(block)
        elif isinstance(event, ToolCallFinished):
            call = self._calls.get(event.id)
            if call is not None:
                call.finish_with(event)
        elif isinstance(event, TurnFinished):
            await self.close_message()
            self.totals.add(event)
            if event.interrupted:
                await self.log.add(Notice("Interrupted.", "warning"))
        elif isinstance(event, Retrying):
            await self.close_message()
            status = f"HTTP {event.error_status}: " if event.error_status else ""
            await self.log.add(
                Notice(
                    plain(
                        f"The model API failed ({status}{event.error}); retrying in "
                        f"{event.delay_ms / 1000:.1f} s (attempt {event.attempt} of "
                        f"{event.max_retries})."
                    ),
                    "warning",
                )
            )
        elif isinstance(event, AgentError):
            await self.close_message()
            await self.log.add(error_notice(event.message, event.hint))

    async def close_message(self) -> None:
        if self._message is not None:
            await self._message.finish()
            self._message = None


def error_notice(message: str, hint: str | None) -> Notice:
    """An error as the user should read it: what happened, then how to fix it."""
    body = plain(message)
    if hint:
        body = body + Content("\n") + plain(hint, "$text")
    return Notice(body, "error")


NO_RESULT = "(no result: the turn ended before the tool returned)"


def replayed(items: Sequence[HistoryItem]) -> list[Widget]:
    """The blocks an earlier conversation showed, built whole (nothing streams)."""
    widgets: list[Widget] = []
    calls: dict[str, ToolCallBlock] = {}
    for item in items:
        if isinstance(item, UserText):
            widgets.append(UserMessage(item.text))
        elif isinstance(item, TextDelta):
            widgets.append(assistant_message(item.text))
        elif isinstance(item, ToolCallStarted):
            block = ToolCallBlock.of(item)
            calls[item.id] = block
            widgets.append(block)
        elif (call := calls.get(item.id)) is not None:
            call.finish_with(item)
    for call in calls.values():
        if call.result is None:
            call.finish(NO_RESULT, True)
    return widgets
