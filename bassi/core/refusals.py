"""Calls bassi refused before they ran, marked so the chat can tell them from a tool's error.

For the model a refusal is an error result like any other. It also carries a short reason in
its ``_meta`` under :data:`REFUSED`; the CLI hands a tool result's ``_meta`` back with the
message that carries the result (``UserMessage.tool_use_result``), so the session puts the
reason on the ``ToolCallFinished`` event as a typed field and the UI never reads it from the
text. A server cannot forge the mark: the proxy strips it from every result a server sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from bassi.core.safe_text import one_line

if TYPE_CHECKING:
    from mcp import types

REFUSED = "bassi/refused"
REASON_CHARS = 200


def refused_result(message: str, reason: str) -> types.CallToolResult:
    """The error result of a call bassi did not run: ``message`` for the model, ``reason``
    (one line) for the chat."""
    from mcp import types

    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        is_error=True,
        _meta={REFUSED: one_line(reason, REASON_CHARS)},
    )


def unmarked(result: types.CallToolResult) -> types.CallToolResult:
    """A server's result without bassi's refusal mark, should it carry one."""
    if result.meta is None or REFUSED not in result.meta:
        return result
    meta = {k: v for k, v in result.meta.items() if k != REFUSED}
    return result.model_copy(update={"meta": meta or None})


def refusal_reason(tool_use_result: object) -> str | None:
    """The reason a call was refused, from the CLI's record of its result (the SDK's
    ``UserMessage.tool_use_result``); None for a call that ran."""
    if not isinstance(tool_use_result, Mapping):
        return None
    meta = tool_use_result.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    reason = meta.get(REFUSED)
    if not isinstance(reason, str):
        return None
    return one_line(reason, REASON_CHARS) or "refused"
