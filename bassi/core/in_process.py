"""Servers that run inside bassi's process.

A server bassi ships (``mcp_servers``) is a ``ServerDefinition``: Python objects bassi lists
and calls directly, as a ``ShippedConnection``. No MCP session sits between bassi and its own
code, so these servers are connected as soon as their modules are imported (a fraction of a
second after the first screen) instead of after the MCP library (about a second more).

Any other in-process server (an ``mcp.server.Server`` a test or an embedding program hands the
catalog) is an ``InProcessServer`` spec that ``connections.ServerConnection`` reaches over
mcp's in-memory transport, like any MCP server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from bassi.core.mcp_config import DEFAULT_TIMEOUT
from bassi.core.offers import OfferError, PromptInfo, ResourceInfo, ResourceTemplateInfo
from bassi.core.registry import ServerStatus
from bassi.core.secrets import ExpandedValues
from mcp_servers._toolkit import ServerDefinition, ToolOutput

if TYPE_CHECKING:
    from mcp import types

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InProcessServer:
    """A server that runs inside bassi's process. ``factory`` makes it: a
    ``ServerDefinition`` for a server bassi ships (a ``ShippedConnection`` serves it), an
    ``mcp.server.Server`` or ``MCPServer`` otherwise (served over mcp's in-memory transport)."""

    name: str
    factory: Callable[[], Any]
    timeout: float = DEFAULT_TIMEOUT
    display_target: str = "in-process"
    expanded: ExpandedValues = field(default_factory=ExpandedValues)
    """Nothing: the entry holds no values from the environment."""
    tool_timeout: float | None = None


@dataclass(eq=False)
class CallScope:
    """One tool call in flight, cancellable by the user (who interrupted the turn)."""

    scope: anyio.CancelScope
    cancelled_by_user: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


class ShippedConnection:
    """A server bassi ships, called directly. It offers what ``ServerConnection`` offers the
    catalog: a status, its tools as ``tools/list`` spells them, and calls with a deadline that
    the user can cancel (cancelling a call cancels its handler, which kills the processes it
    started)."""

    protocol_version: str | None = None
    """No MCP session, so no protocol."""
    prompts: tuple[PromptInfo, ...] = ()
    resources: tuple[ResourceInfo, ...] = ()
    templates: tuple[ResourceTemplateInfo, ...] = ()
    warnings: tuple[str, ...] = ()

    def __init__(
        self,
        spec: InProcessServer,
        *,
        on_change: Callable[[ShippedConnection], None] | None = None,
    ) -> None:
        self.spec = spec
        self.status = ServerStatus.CONNECTING
        self.error: str | None = None
        self.detail: str | None = None
        self.attempts = 0
        self._on_change = on_change
        self._definition: ServerDefinition | None = None
        self._listing: tuple[dict[str, Any], ...] = ()
        self._task: asyncio.Task[None] | None = None
        self._attempt_done = asyncio.Event()
        self._calls: set[CallScope] = set()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def timeout(self) -> float:
        return self.spec.timeout

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools as MCP's ``tools/list`` spells them."""
        return list(self._listing)

    def start(self) -> None:
        """Define the server in a thread (importing its module takes a moment)."""
        if self._task is not None:
            raise RuntimeError(f"server '{self.name}' is already running")
        self._attempt_done = asyncio.Event()
        self._set(ServerStatus.CONNECTING, None)
        self._task = asyncio.create_task(self._define(), name=f"shipped server {self.name}")

    async def wait_attempt(self) -> None:
        await self._attempt_done.wait()

    async def close(self) -> None:
        """Stop the calls in flight; the processes they started are gone when this returns."""
        task, self._task = self._task, None
        self._definition = None
        calls = list(self._calls)
        for call in calls:
            call.scope.cancel()
        if task is not None:
            task.cancel()
            await asyncio.wait({task})
        for call in calls:
            await call.done.wait()

    async def reconnect(self) -> None:
        await self.close()
        self.start()

    def cancel_calls(self) -> int:
        for call in self._calls:
            call.cancelled_by_user = True
            call.scope.cancel()
        return len(self._calls)

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the call's own deadline)
        progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> types.CallToolResult:
        """Run the tool's handler here. Every way it can end is a result for the model:
        the tool's answer, an unknown tool, a deadline passed, the user's cancel."""
        definition = self._definition
        if definition is None:
            return _result(unavailable_message(self.name, self.status, self.error), error=True)
        call = CallScope(anyio.CancelScope())
        if timeout is not None:
            call.scope.deadline = anyio.current_time() + timeout
        output: ToolOutput | None = None
        self._calls.add(call)
        try:
            with call.scope:
                output = await definition.call(tool, arguments)
        finally:
            self._calls.discard(call)
            call.done.set()
        if output is not None:
            return _result(output.text, error=output.is_error)
        if call.cancelled_by_user:
            return _result(
                f"the user cancelled the call to '{tool}' on server '{self.name}'", error=True
            )
        if self._definition is None:
            return _result(f"server '{self.name}' was closed during the call", error=True)
        return _result(
            f"tool '{tool}' on server '{self.name}' did not answer within {timeout:g} s",
            error=True,
        )

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
        raise OfferError(f"server '{self.name}' has no prompts")

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        raise OfferError(f"server '{self.name}' has no resources")

    async def _define(self) -> None:
        self.attempts = 1
        try:
            definition, listing = await asyncio.to_thread(self._make)
        except Exception as exc:
            logger.exception("server %s could not be created", self.name)
            first = str(exc).strip().splitlines()
            self._set(
                ServerStatus.FAILED,
                f"could not be created: {type(exc).__name__}" + (f": {first[0]}" if first else ""),
            )
        else:
            self._definition, self._listing = definition, listing
            self._set(ServerStatus.CONNECTED, None)
        finally:
            self._attempt_done.set()

    def _make(self) -> tuple[ServerDefinition, tuple[dict[str, Any], ...]]:
        definition = self.spec.factory()
        if not isinstance(definition, ServerDefinition):
            raise TypeError(f"expected a ServerDefinition, got {type(definition).__name__}")
        return definition, tuple(tool.definition() for tool in definition.tools)

    def _set(self, status: ServerStatus, error: str | None) -> None:
        if (status, error) != (self.status, self.error):
            log_status(logger, self.name, status, error)
        self.status, self.error = status, error
        if self._on_change is not None:
            self._on_change(self)


def unavailable_message(server: str, status: ServerStatus, error: str | None) -> str:
    """Why a call to ``server`` cannot go through now (it is not connected)."""
    if status.starting:
        return f"server '{server}' is still connecting"
    if status is ServerStatus.NEEDS_AUTH:
        return f"server '{server}' needs sign-in (/mcp, or: bassi mcp login {server})"
    if status is ServerStatus.FAILED and error:
        return f"server '{server}' is not available: {error}"
    return f"server '{server}' is not connected"


def log_status(log: logging.Logger, server: str, status: ServerStatus, error: str | None) -> None:
    """A server's new status (and why), in bassi's log: warnings for failures."""
    level = logging.WARNING if status is ServerStatus.FAILED else logging.INFO
    log.log(level, "server %s is %s%s", server, status.value, f": {error}" if error else "")


def _result(text: str, *, error: bool) -> types.CallToolResult:
    """A result as the bridge passes on every server's (loaded with it: a call comes from
    the agent, which runs on the MCP library)."""
    from mcp_servers._serving import call_result

    return call_result(ToolOutput(text, is_error=error))
