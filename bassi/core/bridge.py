"""Every catalog server reaches the CLI as an in-process proxy that bassi controls.

The CLI never gets a stdio or HTTP config: it would start a second copy of each external
server, and it would list every tool it has. Instead each proxy answers ``list_tools`` with
only the tools visible now, each under the name the model calls it by
(``bassi.core.names``: the CLI would otherwise rewrite names itself, and let two tools share
one), and forwards calls, mapped back to exactly one original tool, over the session the
catalog opened at discovery, one process per server.

The proxy checks every call again: the access policy must not refuse it, and the runtime's
``can_use_tool`` must have let exactly this call through (``Admissions``). So a tool that is
hidden, denied or unapproved never runs, whatever path the call took to get here. Then it
checks the arguments against the tool's input schema (``bassi.core.validation``): a
malformed call is refused before the server sees it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from claude_agent_sdk.types import McpSdkServerConfig
from mcp import types
from mcp.server import Server, ServerRequestContext
from pydantic import ValidationError

from bassi.core.connections import error_result
from bassi.core.policy import AccessPolicy
from bassi.core.refusals import unmarked
from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo, qualified_name


class ToolCaller(Protocol):
    """What the proxy needs of the catalog."""

    async def check_arguments(
        self, server: str, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult | None: ...

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, call_id: str | None = None
    ) -> types.CallToolResult: ...


TOOL_USE_ID = "claudecode/toolUseId"
"""The ``_meta`` key under which the CLI tells an MCP server which tool use a call is."""


class Admissions:
    """Calls ``can_use_tool`` let through and no proxy has run yet, by the name called. A
    proxy runs a call only by taking one, so nothing runs that the gate did not pass, even
    if something made the CLI skip the gate."""

    def __init__(self) -> None:
        self._waiting: Counter[str] = Counter()

    def admit(self, qualified: str) -> None:
        self._waiting[qualified] += 1

    def take(self, qualified: str) -> bool:
        if self._waiting[qualified] <= 0:
            return False
        self._waiting[qualified] -= 1
        return True

    def clear(self) -> None:
        """At the end of a turn: calls let through but never made expire."""
        self._waiting.clear()


NOT_ADMITTED = (
    "The call of {name} did not pass bassi's approval, so it was not run. Call the tool "
    "again; bassi asks the user if needed."
)


class CallTracker:
    """Counts the calls in flight per server. Re-listing a server means toggling it off and
    on in the CLI, which would cut a running call short, so a busy server is left alone."""

    def __init__(self) -> None:
        self._running: Counter[str] = Counter()

    def busy(self, server: str) -> bool:
        return self._running[server] > 0

    @contextmanager
    def running(self, server: str) -> Iterator[None]:
        self._running[server] += 1
        try:
            yield
        finally:
            self._running[server] -= 1


def mcp_tool(tool: ToolInfo, name: str) -> types.Tool:
    """The definition the CLI lists: as the server announced it, under ``name`` (the one
    the model calls it by). Annotations that do not validate are dropped rather than hiding
    the tool."""
    annotations = None
    if tool.annotations:
        try:
            annotations = types.ToolAnnotations.model_validate(dict(tool.annotations))
        except ValidationError:
            annotations = None
    return types.Tool(
        name=name,
        description=tool.description,
        input_schema=dict(tool.input_schema) or {"type": "object"},
        annotations=annotations,
    )


def tool_use_id(params: types.CallToolRequestParams) -> str | None:
    """The CLI's id of the tool use this call serves, so progress and the full result can be
    shown in that call's block."""
    value = (params.meta or {}).get(TOOL_USE_ID)
    return value if isinstance(value, str) else None


def proxy_server(
    name: str,
    policy: AccessPolicy,
    catalog: ToolCaller,
    admissions: Admissions,
    tracker: CallTracker,
) -> Server[Any]:
    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        names = policy.exposure.names(name)
        listed = []
        for tool in policy.visible_tools(name):
            model_name = names.model_name(tool.name)
            if model_name is not None:
                listed.append(mcp_tool(tool, model_name))
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        called = qualified_name(name, params.name)
        decision = policy.decide(called)
        if decision.refused or decision.tool is None:
            return error_result(decision.message)
        if not admissions.take(called):
            return error_result(NOT_ADMITTED.format(name=called))
        tool = decision.tool.name
        arguments = params.arguments or {}
        with tracker.running(name):
            # Validation: arguments that break the tool's input schema never reach the server.
            if (invalid := await catalog.check_arguments(name, tool, arguments)) is not None:
                return invalid
            try:
                result = await catalog.call_tool(name, tool, arguments, call_id=tool_use_id(params))
                return unmarked(result)
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                return error_result(f"The server '{name}' did not answer {params.name} in time.")
            except Exception as exc:
                why = one_line(str(exc), 500) or type(exc).__name__
                return error_result(f"The server '{name}' failed running {params.name}: {why}")

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def proxy_config(
    name: str,
    policy: AccessPolicy,
    catalog: ToolCaller,
    admissions: Admissions,
    tracker: CallTracker,
) -> McpSdkServerConfig:
    return McpSdkServerConfig(
        type="sdk",
        name=name,
        instance=proxy_server(name, policy, catalog, admissions, tracker),
    )
