"""One live MCP client session per server: how bassi discovers tools and later calls them.

Each server runs once. The session that listed its tools stays open, and tool calls go through
it. Each connection lives in an asyncio task of its own that enters and leaves the transport
and session contexts, because anyio requires a context to be left by the task that entered
it; callers on any task can then start, use, reconnect and close the connection.

Failures are described for the person who has to fix them: the exit code and last stderr lines
of a stdio server, the HTTP status of a remote one, which step timed out.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx2
from mcp import ClientSession, types
from mcp.client._memory import InMemoryTransport
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from bassi import __version__
from bassi.core.mcp_config import DEFAULT_TIMEOUT, HttpServerConfig, StdioServerConfig
from bassi.core.registry import ServerStatus
from bassi.core.secrets import ExpandedValues, without_agent_credentials
from bassi.core.stdio_transport import EXIT_GRACE, ServerProcess, open_stdio_server

# Server faults reach the person through each server's status; the mcp library's own error
# logs would otherwise fall through to stderr, and the terminal belongs to the TUI.
logging.getLogger("mcp").addHandler(logging.NullHandler())

CLIENT_INFO = types.Implementation(name="bassi", version=__version__)
HTTP_READ_TIMEOUT = 300.0
"""Seconds an HTTP response stream may stay silent: servers hold SSE streams open."""

InProcessFactory = Callable[[], "Server[Any] | MCPServer"]


@dataclass(frozen=True, slots=True)
class InProcessServer:
    """A server bassi ships, run inside bassi's process over mcp's in-memory transport."""

    name: str
    factory: InProcessFactory
    timeout: float = DEFAULT_TIMEOUT
    display_target: str = "in-process"
    expanded: ExpandedValues = field(default_factory=ExpandedValues)
    """Nothing: the entry holds no values from the environment."""


ServerSpec = StdioServerConfig | HttpServerConfig | InProcessServer


class _ConnectError(Exception):
    """A failure whose message is already what the person should read."""


class ServerConnection:
    """The session with one server, with its status, failure reason and tools.

    ``on_change`` is called (on the connection's task) whenever ``status``, ``error`` or
    ``tools`` changed."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        env: Mapping[str, str],
        project_dir: Path,
        on_change: Callable[[ServerConnection], None] | None = None,
    ) -> None:
        self.spec = spec
        self.status = ServerStatus.CONNECTING
        self.error: str | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self._env = env
        self._project_dir = project_dir
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._session: ClientSession | None = None
        self._attempt_done = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._stopping = False
        self._step = "starting"
        self._process: ServerProcess | None = None
        self._http_status: str | None = None
        self._wake: anyio.Event | None = None
        self._transport_ended = False
        self._tools_changed = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def timeout(self) -> float:
        return self.spec.timeout

    def start(self) -> None:
        """Begin connecting in the background."""
        if self._task is not None:
            raise RuntimeError(f"server '{self.name}' is already running")
        self._stopping = False
        self._attempt_done = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._set(ServerStatus.CONNECTING, None)
        self._task = asyncio.create_task(self._run(), name=f"mcp server {self.name}")

    async def wait_attempt(self) -> None:
        """Until the current connection attempt is connected or failed."""
        await self._attempt_done.wait()

    async def close(self) -> None:
        """Close the session and stop the server; the process is gone when this returns."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()
        await asyncio.wait({task})

    async def reconnect(self) -> None:
        await self.close()
        self.start()

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (sent as the request's own timeout)
    ) -> types.CallToolResult:
        """Call ``tool`` over the open session. The server's result is returned as it came,
        errors included; a server that is down, dies or does not answer in time yields an
        error result that says so."""
        session = self._session
        if session is None:
            return self._failure(self._unavailable_message())
        try:
            return await session.call_tool(tool, dict(arguments), read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                return self._failure(
                    f"tool '{tool}' on server '{self.name}' did not answer within {timeout:g} s"
                )
            if exc.code == types.CONNECTION_CLOSED or self._session is not session:
                return await self._stopped_during_call()
            return self._failure(f"server '{self.name}' rejected the call: {exc.error.message}")
        except ValidationError as exc:
            return self._failure(f"server '{self.name}' sent an invalid result: {_first_line(exc)}")
        except Exception as exc:
            # The caller is usually the model's tool call: it gets an answer, never a traceback.
            if self._session is not session:
                return await self._stopped_during_call()
            return self._failure(
                f"calling '{tool}' on server '{self.name}' failed: "
                f"{type(exc).__name__}: {_first_line(exc)}"
            )

    async def _stopped_during_call(self) -> types.CallToolResult:
        """The session ended under a call: wait (briefly) for the reason, then give it."""
        with anyio.move_on_after(EXIT_GRACE + 1):
            await self._disconnected.wait()
        if self._stopping:
            return self._failure(f"server '{self.name}' was closed during the call")
        return self._failure(f"server '{self.name}' stopped during the call: {self.error}")

    def _failure(self, message: str) -> types.CallToolResult:
        """An error result for the model; it may quote a URL or a server's words, so what the
        configuration took from the environment is masked."""
        return error_result(self.spec.expanded.mask(message))

    def _unavailable_message(self) -> str:
        if self.status is ServerStatus.CONNECTING:
            return f"server '{self.name}' is still connecting"
        if self.status is ServerStatus.FAILED and self.error:
            return f"server '{self.name}' is not available: {self.error}"
        return f"server '{self.name}' is not connected"

    # The connection's own task.

    async def _run(self) -> None:
        try:
            if not self._stopping:
                await self._attempt()
        finally:
            # Whatever happened, nobody may wait forever on this connection.
            self._session = None
            self._attempt_done.set()
            self._disconnected.set()

    async def _attempt(self) -> None:
        self._scope = scope = anyio.CancelScope(deadline=anyio.current_time() + self.timeout)
        self._wake = anyio.Event()
        self._transport_ended = self._tools_changed = False
        self._process = self._http_status = None
        self._step = "starting"
        failure: str | None = None
        try:
            with scope:
                failure = await self._connect_and_serve(scope)
        except Exception as exc:
            failure = self._describe(exc)
        except BaseExceptionGroup as group:
            # Errors that surfaced together with a cancellation: report the errors.
            errors = group.subgroup(Exception)
            if errors is None:
                raise
            failure = self._describe(errors)
        finally:
            self._session = None
        if scope.cancelled_caught and not self._stopping and failure is None:
            failure = self._timeout_reason()
        if failure is not None and not self._stopping:
            self._set(ServerStatus.FAILED, failure)

    async def _connect_and_serve(self, scope: anyio.CancelScope) -> str | None:
        """Connect, list the tools, then keep the session open until the transport ends
        (returning why) or the connection is closed (cancelled)."""
        async with AsyncExitStack() as stack:
            read, write = await self._open(stack)
            self._step = "initialize"
            session = await stack.enter_async_context(
                ClientSession(
                    _WatchedReadStream(read, self._on_transport_end),
                    write,
                    message_handler=self._on_message,
                    client_info=CLIENT_INFO,
                )
            )
            await session.initialize()
            if self._process is not None:
                self._process.exit_grace = EXIT_GRACE
            self._step = "tools/list"
            tools = await list_all_tools(session)
            scope.deadline = math.inf
            self._session = session
            self._set_tools(tools)
            self._attempt_done.set()
            return await self._serve(session)

    async def _serve(self, session: ClientSession) -> str:
        while True:
            assert self._wake is not None
            await self._wake.wait()
            self._wake = anyio.Event()
            if self._transport_ended:
                self._session = None
                return await self._end_reason()
            if self._tools_changed:
                self._tools_changed = False
                # On failure the old list stays; a dead transport is noticed above.
                with anyio.move_on_after(self.timeout), suppress(MCPError, ValidationError):
                    self._set_tools(await list_all_tools(session))

    async def _open(self, stack: AsyncExitStack) -> TransportStreams:
        spec = self.spec
        if isinstance(spec, InProcessServer):
            try:
                server = spec.factory()
            except Exception as exc:
                raise _ConnectError(f"could not be created: {_first_line(exc)}") from exc
            return await stack.enter_async_context(InMemoryTransport(server))
        if isinstance(spec, StdioServerConfig):
            cwd = spec.cwd or self._project_dir
            if not cwd.is_dir():
                raise _ConnectError(f"working directory not found: {cwd}")
            # The agent's credentials stay out unless the entry's own "env" names them.
            env = {**without_agent_credentials(self._env), **spec.env}
            read, write, self._process = await stack.enter_async_context(
                open_stdio_server(spec.command, spec.args, env=env, cwd=cwd)
            )
            return read, write
        client_factory = self._http_client_factory(spec)
        if spec.type == "sse":
            return await stack.enter_async_context(
                sse_client(
                    spec.url,
                    timeout=spec.timeout,
                    sse_read_timeout=HTTP_READ_TIMEOUT,
                    httpx_client_factory=client_factory,
                )
            )
        client = await stack.enter_async_context(client_factory())
        return await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))

    def _http_client_factory(self, spec: HttpServerConfig) -> Callable[..., httpx2.AsyncClient]:
        async def record_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_status = f"HTTP {response.status_code} {response.reason_phrase}"

        def factory(*_: object, **__: object) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=dict(spec.headers),
                timeout=httpx2.Timeout(spec.timeout, read=HTTP_READ_TIMEOUT),
                event_hooks={"response": [record_status]},
            )

        return factory

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed = True
            self._wake_up()

    def _on_transport_end(self) -> None:
        self._transport_ended = True
        self._wake_up()

    def _wake_up(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _set_tools(self, tools: list[types.Tool]) -> None:
        unique: dict[str, types.Tool] = {}
        for tool in tools:
            unique.setdefault(tool.name, tool)
        self.tools = tuple(unique.values())
        self._set(ServerStatus.CONNECTED, None)

    def _set(self, status: ServerStatus, error: str | None) -> None:
        """``error`` is shown and logged: a stderr tail or a URL in it may repeat what the
        configuration took from the environment, so that is masked here, once for all."""
        self.status = status
        self.error = None if error is None else self.spec.expanded.mask(error)
        if status is not ServerStatus.CONNECTED and status is not ServerStatus.CONNECTING:
            self._disconnected.set()
        if self._on_change is not None:
            self._on_change(self)

    # Failure reasons.

    async def _end_reason(self) -> str:
        """Why an established connection ended."""
        if self._process is not None:
            await self._process.wait_exit(EXIT_GRACE)
            return self._with_stderr(
                self._process.exit_description() or "closed its output", self._process
            )
        return "the connection closed"

    def _timeout_reason(self) -> str:
        step = {
            "starting": "while starting",
            "initialize": "waiting for its answer to initialize",
            "tools/list": "while listing its tools",
        }[self._step]
        reason = f"timed out after {self.timeout:g} s {step}"
        if self._http_status:
            reason += f" ({self._http_status})"
        return self._with_stderr(reason, self._process)

    def _describe(self, exc: BaseException) -> str:
        if self._process is not None and (exit_text := self._process.exit_description()):
            return self._with_stderr(exit_text, self._process)
        cause = _root_cause(exc)
        spec = self.spec
        if isinstance(cause, _ConnectError):
            return str(cause)
        if isinstance(spec, StdioServerConfig) and isinstance(cause, OSError):
            if isinstance(cause, FileNotFoundError) and cause.filename in (spec.command, None):
                return f"command not found: {spec.command}"
            if isinstance(cause, PermissionError):
                return f"permission denied running {spec.command}"
            return f"could not start {spec.command}: {cause.strerror or cause}"
        if isinstance(cause, httpx2.HTTPStatusError):
            response = cause.response
            return f"HTTP {response.status_code} {response.reason_phrase} from {response.url}"
        if isinstance(cause, httpx2.TimeoutException):
            return f"timed out after {self.timeout:g} s waiting for {_url(spec)}"
        if isinstance(cause, httpx2.HTTPError):
            return f"cannot reach {_url(spec)}: {_first_line(cause)}"
        if self._http_status:
            return f"{self._http_status} from {_url(spec)}"
        if isinstance(cause, MCPError):
            return self._with_stderr(f"{self._step} failed: {cause.error.message}", self._process)
        if isinstance(cause, ValidationError):
            return f"sent an invalid answer to {self._step}: {_first_line(cause)}"
        return self._with_stderr(
            f"{self._step} failed: {type(cause).__name__}: {_first_line(cause)}", self._process
        )

    @staticmethod
    def _with_stderr(reason: str, process: ServerProcess | None) -> str:
        if process is None:
            return reason
        if process.noise:
            reason += f"; it wrote text that is not MCP to stdout: {process.noise[-1]!r}"
        tail = process.stderr_tail()
        return f"{reason}\nlast lines of its stderr:\n{tail}" if tail else reason


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """Every page of ``tools/list``. A server that repeats a cursor would loop forever, so
    that ends the listing."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if cursor is None or cursor in seen:
            return tools
        seen.add(cursor)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


class _WatchedReadStream:
    """The session's read stream, passed through unchanged except that its end is reported:
    the session has no hook of its own for "the server went away"."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _root_cause(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _url(spec: ServerSpec) -> str:
    return spec.url if isinstance(spec, HttpServerConfig) else spec.name
