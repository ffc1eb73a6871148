"""An earlier conversation as the user saw it, for showing it again when it is resumed.

The CLI's transcript holds more than the conversation: system reminders it adds to user
turns, markers of local commands and interrupts, synthetic assistant messages it writes for
failed API calls, thinking blocks. Only what the user typed and what the agent said and did is
kept, as the events a live turn produces (:class:`TextDelta` for a whole reply,
:class:`ToolCallStarted` / :class:`ToolCallFinished` for a call), plus :class:`UserText`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bassi.core.events import TextDelta, ToolCallFinished, ToolCallStarted
from bassi.core.settings import Settings
from bassi.core.tool_results import result_blocks, result_text
from bassi.core.tools import split_tool_name

if TYPE_CHECKING:
    from claude_agent_sdk import SessionMessage

logger = logging.getLogger(__name__)

EXCHANGES_SHOWN = 20
"""How many exchanges (a user message and everything up to the next) a resume shows."""

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_CLI_MARKERS = (
    "<local-command-",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "[Request interrupted by user",
)
_SYNTHETIC_MODEL = "<synthetic>"


@dataclass(frozen=True)
class UserText:
    """Something the user typed."""

    text: str


HistoryItem = UserText | TextDelta | ToolCallStarted | ToolCallFinished


@dataclass(frozen=True)
class History:
    """The tail of a conversation: its last exchanges, and how much came before them."""

    items: list[HistoryItem] = field(default_factory=list)
    messages: int = 0
    """User and assistant messages in the whole conversation (tool calls not counted)."""
    hidden_messages: int = 0
    """Of those, the ones before the exchanges in ``items``."""


class HistoryUnavailable(Exception):
    """The conversation's transcript could not be read; the message says why."""


def load_history(settings: Settings, session_id: str, exchanges: int = EXCHANGES_SHOWN) -> History:
    """Read an earlier conversation of this project (blocking: run it in a thread).

    Raises HistoryUnavailable when the transcript is missing, unreadable or holds no
    messages."""
    from bassi.core.session import session_messages

    try:
        messages = session_messages(settings, session_id)
    except Exception as exc:  # a damaged file can trip the SDK's parser in any way
        logger.warning("could not read conversation %s", session_id, exc_info=exc)
        raise HistoryUnavailable(f"its transcript could not be read ({exc})") from exc
    items = list(history_items(messages))
    if not items:
        raise HistoryUnavailable("its transcript is missing or holds no readable messages")
    return last_exchanges(items, exchanges)


def last_exchanges(items: Sequence[HistoryItem], exchanges: int) -> History:
    """The last ``exchanges`` exchanges of ``items``, counting what is left out."""
    starts = [i for i, item in enumerate(items) if isinstance(item, UserText)]
    cut = starts[-exchanges] if exchanges > 0 and len(starts) > exchanges else 0
    return History(
        items=list(items[cut:]), messages=_count(items), hidden_messages=_count(items[:cut])
    )


def history_items(messages: Iterable[SessionMessage]) -> Iterator[HistoryItem]:
    """The conversation in ``messages`` as the user saw it; adjacent text of one reply (the
    CLI writes each content block as its own entry) is joined into one ``TextDelta``."""
    pending: list[str] = []
    for item in _raw_items(messages):
        if isinstance(item, TextDelta):
            pending.append(item.text)
            continue
        if pending:
            yield TextDelta("\n\n".join(pending))
            pending = []
        yield item
    if pending:
        yield TextDelta("\n\n".join(pending))


def _raw_items(messages: Iterable[SessionMessage]) -> Iterator[HistoryItem]:
    for message in messages:
        body = message.message if isinstance(message.message, dict) else {}
        content = body.get("content")
        if message.type == "user":
            yield from _user_items(content)
        elif body.get("model") != _SYNTHETIC_MODEL:
            yield from _assistant_items(content)


def _user_items(content: Any) -> Iterator[HistoryItem]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return
    typed = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            result = block.get("content")
            yield ToolCallFinished(
                str(block.get("tool_use_id", "")),
                result_text(result),
                bool(block.get("is_error")),
                content=result_blocks(result),
            )
        elif block.get("type") == "text":
            typed.append(_typed_text(str(block.get("text", ""))))
    text = "\n".join(t for t in typed if t)
    if text:
        yield UserText(text)


def _typed_text(text: str) -> str:
    """What the user typed of a text block: no system reminders, nothing the CLI wrote."""
    text = _REMINDER.sub("", text).strip()
    return "" if text.startswith(_CLI_MARKERS) else text


def _assistant_items(content: Any) -> Iterator[HistoryItem]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            yield TextDelta(str(block["text"]))
        elif block.get("type") == "tool_use":
            name = str(block.get("name", ""))
            server, tool = split_tool_name(name)
            arguments = block.get("input")
            yield ToolCallStarted(
                str(block.get("id", "")),
                name,
                server,
                tool,
                dict(arguments) if isinstance(arguments, dict) else {},
            )


def _count(items: Iterable[HistoryItem]) -> int:
    return sum(isinstance(item, UserText | TextDelta) for item in items)
