"""What a chat turn produces, as plain typed values the UI renders.

The SDK's message types mirror the CLI's wire protocol (stream events, synthetic assistant
messages for errors, system messages); the UI should not have to know any of that. A turn is a
sequence of these events ending with exactly one :class:`TurnFinished` or :class:`AgentError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from bassi.core.tool_results import ResultBlock

ErrorKind = Literal[
    "credentials",  # no API key or login at all: the CLI was not started
    "auth",  # the key/login was rejected (HTTP 401/403, billing)
    "rate_limit",  # HTTP 429
    "overloaded",  # HTTP 529 / overloaded_error
    "api",  # any other API failure (5xx, invalid request, broken stream)
    "connection",  # the API or the CLI could not be reached / the CLI died
    "internal",  # a bug on our side; the message says what happened
]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's reply, in order; concatenated they are the reply."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model asked for a tool call (it may still be refused by permissions)."""

    id: str
    qualified_name: str
    """As the model calls it, e.g. ``mcp__bash__run``."""
    server: str | None
    """The MCP server part of the name; None for a non-MCP tool."""
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolCallFinished:
    """The result the model got back for tool call ``id`` (a refusal counts, as an error)."""

    id: str
    text: str
    """What the model got back."""
    is_error: bool
    refused: str | None = None
    """Why bassi refused the call before it reached the server (its arguments broke the
    tool's schema), in one line; None for a call that ran, or failed on its own."""
    content: tuple[ResultBlock, ...] = field(default=(), compare=False)
    """The result as people should read it, block by block (from the server's own result
    when bassi has it, with its structured content); empty means ``text``. (Not compared:
    it is the result in another form.)"""
    interrupted: bool = False
    """The user stopped the call: ``text`` is the CLI's note to the model, not a result."""


@dataclass(frozen=True)
class Retrying:
    """The API failed and the CLI retries by itself after ``delay_ms``; the turn goes on."""

    attempt: int
    max_retries: int
    delay_ms: int
    error_status: int | None
    error: str


@dataclass(frozen=True)
class TurnFinished:
    """The turn ended normally (also after an interrupt: ``interrupted`` is then True)."""

    session_id: str
    cost_usd: float
    """What this turn cost (the session keeps the running total in ``total_cost_usd``)."""
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    duration_ms: int
    num_turns: int
    """Model round-trips in this turn (a tool call and its follow-up count two)."""
    interrupted: bool = False


@dataclass(frozen=True)
class AgentError:
    """The turn failed. ``message`` says what happened, ``hint`` what the user can do."""

    kind: ErrorKind
    message: str
    hint: str = ""


AgentEvent = TextDelta | ToolCallStarted | ToolCallFinished | Retrying | TurnFinished | AgentError
