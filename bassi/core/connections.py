"""One live MCP client session per server: how bassi discovers tools, prompts and resources
and later uses them.

Each server runs once. The session that listed its tools stays open, and tool calls, prompts
and resource reads go through it. Each connection lives in an asyncio task of its own that
enters and leaves the transport and session contexts, because anyio requires a context to be
left by the task that entered it; callers on any task can then start, use, reconnect and close
the connection.

Starting is meant to survive real servers: a start that fails for a reason that may pass (the
process died, the network hiccuped) is retried, up to ``MAX_START_ATTEMPTS`` in all, as Claude
Code does; a server started through npx/uvx that is still installing gets the install budget
instead of its start-up timeout, and a half-written npx install is removed before the next
attempt. A server that refuses the 2025 ``initialize`` handshake because it speaks only the
2026-07-28 revision is asked again with ``server/discover``.

Failures are described for the person who has to fix them: the exit code and last stderr lines
of a stdio server, the HTTP status of a remote one, which step timed out. A 401 is not a
failure but "needs sign-in".
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

import anyio
import anyio.abc
import httpx2
from mcp import Client, types
from mcp.client._memory import InMemoryTransport
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import methods as wire_methods
from mcp_types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from bassi import __version__
from bassi.core import foreground, start_slots
from bassi.core.in_process import (
    CallScope,
    InProcessServer,
    log_status,
    unavailable_message,
)
from bassi.core.mcp_config import HttpServerConfig, StdioServerConfig
from bassi.core.offers import OfferError, PromptInfo, ResourceInfo, ResourceTemplateInfo
from bassi.core.package_runner import (
    PackageRun,
    is_installed,
    looks_corrupt,
    package_run,
    remove_install,
)
from bassi.core.registry import ServerStatus
from bassi.core.safe_text import one_line
from bassi.core.secrets import without_agent_credentials
from bassi.core.stdio_transport import EXIT_GRACE, ServerProcess, open_stdio_server

# Server faults reach the person through each server's status; the mcp library's own error
# logs would otherwise fall through to stderr, and the terminal belongs to the TUI.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logger = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="bassi", version=__version__)
HTTP_READ_TIMEOUT = 300.0
"""Seconds an HTTP response stream may stay silent: servers hold SSE streams open."""
MAX_START_ATTEMPTS = 3
"""Attempts at starting a server whose start failed for a reason that may pass."""
RETRY_DELAYS = (0.5, 1.5)
"""Seconds before the second and third attempt."""
INSTALL_POLL = 0.5
"""Seconds between checks whether an npx package being installed has arrived."""
DEFAULT_INSTALL_TIMEOUT = 600.0
WAITING_FOR_TURN = "waiting for other servers to start first"
"""Shown while a stdio server waits for its turn (``start_slots``); its timeout has not begun."""

_Answer = TypeVar("_Answer")


ServerSpec = StdioServerConfig | HttpServerConfig | InProcessServer


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A server asks the person for input: a form (``params.requested_schema``) or a URL
    to open (``params.url``). The answer goes back to the server as it is."""

    server: str
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[types.ElicitResult]]
Progress = Callable[[float, float | None, str | None], None]
"""Called with (progress, total, message) as a running call reports progress."""
AuthFactory = Callable[[HttpServerConfig], httpx2.Auth | None]
"""The OAuth provider for an HTTP server, or None when nobody signed in to it."""


class SignInRequired(Exception):
    """The server wants a signed-in user and the stored sign-in (if any) is not enough."""


class _ConnectError(Exception):
    """A failure whose message is already what the person should read."""


@dataclass
class _Outcome:
    """How one start attempt ended (when it did not end in a working connection)."""

    failure: str
    retry: bool = False
    needs_auth: bool = False
    modern: bool = False
    """The server refused ``initialize`` as a 2026-07-28-only server: ask with discover."""


@dataclass
class _Offers:
    tools: list[types.Tool] = field(default_factory=list)
    prompts: list[types.Prompt] = field(default_factory=list)
    resources: list[types.Resource] = field(default_factory=list)
    templates: list[types.ResourceTemplate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class ServerConnection:
    """The session with one server, with its status, failure reason and what it offers.

    ``on_change`` is called (on the connection's task) whenever ``status``, ``error``,
    ``detail`` or the offers changed."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        env: Mapping[str, str],
        project_dir: Path,
        on_change: Callable[[ServerConnection], None] | None = None,
        elicitation: Callable[[], ElicitationHandler | None] | None = None,
        auth: AuthFactory | None = None,
        install_timeout: float = DEFAULT_INSTALL_TIMEOUT,
    ) -> None:
        self.spec = spec
        self.status = ServerStatus.CONNECTING
        self.error: str | None = None
        self.detail: str | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self.prompts: tuple[PromptInfo, ...] = ()
        self.resources: tuple[ResourceInfo, ...] = ()
        self.templates: tuple[ResourceTemplateInfo, ...] = ()
        self.warnings: tuple[str, ...] = ()
        self.protocol_version: str | None = None
        self.attempts = 0
        """Start attempts made by the current (or last) start."""
        self._env = env
        self._project_dir = project_dir
        self._on_change = on_change
        self._elicitation = elicitation
        self._auth = auth
        self._install_timeout = install_timeout
        self._package = (
            package_run(spec.command, spec.args) if isinstance(spec, StdioServerConfig) else None
        )
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._slot = start_slots.StartSlot(None)
        """This attempt's turn to start (``start_slots``)."""
        self._client: Client | None = None
        self._attempt_done = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._stopping = False
        self._modern = False
        self._step = "starting"
        self._installing = False
        self._budget = self.timeout
        self._process: ServerProcess | None = None
        self._http_status: str | None = None
        self._http_code: int | None = None
        self._bearer_challenge = False
        self._wake: anyio.Event | None = None
        self._transport_ended = False
        self._changed: set[str] = set()
        self._calls: set[CallScope] = set()
        self._skipped: list[str] = []

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def timeout(self) -> float:
        return self.spec.timeout

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tools as MCP's ``tools/list`` spells them."""
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in self.tools]

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
        """Until the current start is connected, failed (after its retries) or needs sign-in."""
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

    def cancel_calls(self) -> int:
        """Cancel every call in flight (the user interrupted the turn); each sends the
        server ``notifications/cancelled`` and answers that the user cancelled it."""
        for call in self._calls:
            call.cancelled_by_user = True
            call.scope.cancel()
        return len(self._calls)

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the call's own deadline, paused for a person)
        progress: Progress | None = None,
    ) -> types.CallToolResult:
        """Call ``tool`` over the open session. The server's result is returned as it came,
        errors included; a server that is down, dies, does not answer in time or whose call
        the user cancelled yields an error result that says so. While the server waits on
        the person (elicitation) the deadline stands still."""
        client = self._client
        if client is None:
            return self._failure(unavailable_message(self.name, self.status, self.error))

        on_progress = progress

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        result: types.CallToolResult | None = None
        call = CallScope(anyio.CancelScope())
        if timeout is not None:
            call.scope.deadline = anyio.current_time() + timeout
        self._calls.add(call)
        try:
            with call.scope:
                result = await client.call_tool(
                    tool, dict(arguments), progress_callback=report if on_progress else None
                )
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED or self._client is not client:
                return await self._stopped_during_call()
            return self._failure(f"server '{self.name}' rejected the call: {exc.error.message}")
        except ValidationError as exc:
            return self._failure(f"server '{self.name}' sent an invalid result: {_first_line(exc)}")
        except Exception as exc:
            # The caller is usually the model's tool call: it gets an answer, never a traceback.
            if self._client is not client:
                return await self._stopped_during_call()
            return self._failure(
                f"calling '{tool}' on server '{self.name}' failed: "
                f"{type(exc).__name__}: {_first_line(exc)}"
            )
        finally:
            self._calls.discard(call)
        if result is not None:
            return result
        if call.cancelled_by_user:
            return self._failure(f"the user cancelled the call to '{tool}' on server '{self.name}'")
        return self._failure(
            f"tool '{tool}' on server '{self.name}' did not answer within {timeout:g} s"
        )

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
        """The prompt's messages, rendered by the server. Raises OfferError."""
        return await self._ask("prompt", lambda client: client.get_prompt(name, dict(arguments)))

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The resource's contents. Raises OfferError."""
        return await self._ask("resource", lambda client: client.read_resource(uri))

    async def _ask(self, what: str, request: Callable[[Client], Awaitable[_Answer]]) -> _Answer:
        """One request for a prompt or a resource, within the server's timeout; every way it
        can fail becomes an OfferError that says how."""
        if self._client is None:
            raise OfferError(unavailable_message(self.name, self.status, self.error))
        try:
            with anyio.fail_after(self.timeout):
                return await request(self._client)
        except TimeoutError:
            raise OfferError(
                f"server '{self.name}' did not answer within {self.timeout:g} s"
            ) from None
        except MCPError as exc:
            raise OfferError(f"server '{self.name}': {exc.error.message}") from exc
        except ValidationError as exc:
            raise OfferError(
                f"server '{self.name}' sent an invalid {what}: {_first_line(exc)}"
            ) from exc

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

    # The connection's own task.

    async def _run(self) -> None:
        try:
            self.attempts = 0
            while not self._stopping:
                self.attempts += 1
                outcome = await self._attempt()
                if outcome is None or self._stopping:
                    return
                if outcome.modern and not self._modern:
                    self._modern = True
                    self.attempts -= 1
                    continue
                if outcome.needs_auth:
                    self._set(ServerStatus.NEEDS_AUTH, outcome.failure)
                    return
                self._clean_broken_install()
                if outcome.retry and self.attempts < MAX_START_ATTEMPTS:
                    detail = (
                        f"attempt {self.attempts} of {MAX_START_ATTEMPTS} failed "
                        f"({one_line(outcome.failure, 200)}); retrying"
                    )
                    self._set(ServerStatus.CONNECTING, None, detail)
                    await anyio.sleep(RETRY_DELAYS[self.attempts - 1])
                    continue
                failure = outcome.failure
                if self.attempts > 1:
                    failure = f"{failure}\n(gave up after {self.attempts} attempts)"
                self._set(ServerStatus.FAILED, failure)
                return
        finally:
            # Whatever happened, nobody may wait forever on this connection.
            self._client = None
            self._attempt_done.set()
            self._disconnected.set()

    def _clean_broken_install(self) -> None:
        """After a failed start through npx that was installing (and so may have been cut
        short) or that failed the way a half-written install fails: remove that install."""
        run = self._package
        if run is None:
            return
        stderr = self._process.stderr_tail(40) if self._process is not None else ""
        if self._installing or looks_corrupt(stderr):
            for entry in remove_install(run, self._env):
                logger.info("server %s: removed the npx install at %s", self.name, entry)

    async def _attempt(self) -> _Outcome | None:
        """One start. None when the connection ran and was closed (or its server ended after
        it connected, which is recorded as failed here); otherwise why the start failed."""
        budget = self.timeout
        run = self._package
        self._installing = run is not None and not is_installed(run, self._env)
        if self._installing:
            assert run is not None
            budget = max(budget, self._install_timeout)
            status = ServerStatus.INSTALLING if run.runner == "npx" else ServerStatus.CONNECTING
            self._set(status, None, f"installing {run.package} with {run.runner}")
        self._budget = budget
        shown = self.detail
        self._slot = await start_slots.take(
            isinstance(self.spec, StdioServerConfig),
            lambda: self._set(self.status, None, WAITING_FOR_TURN),
        )
        if self.detail != shown:
            self._set(self.status, None, shown)
        self._scope = scope = anyio.CancelScope(deadline=anyio.current_time() + budget)
        self._wake = anyio.Event()
        self._transport_ended = False
        self._changed = set()
        self._skipped = []
        self._process = self._http_status = self._http_code = None
        self._bearer_challenge = False
        self._step = "starting"
        ended: str | None = None
        outcome: _Outcome | None = None
        try:
            with scope:
                ended = await self._connect_and_serve(scope)
        except Exception as exc:
            outcome = self._outcome(exc)
        except BaseExceptionGroup as group:
            # Errors that surfaced together with a cancellation: report the errors.
            errors = group.subgroup(Exception)
            if errors is None:
                raise
            outcome = self._outcome(errors)
        finally:
            self._client = None
            self._slot.release()
        if self._stopping:
            return None
        if ended is not None:
            self._set(ServerStatus.FAILED, ended)
            return None
        if outcome is None and scope.cancelled_caught:
            outcome = _Outcome(self._timeout_reason(self._budget))
        return outcome

    async def _connect_and_serve(self, scope: anyio.CancelScope) -> str:
        """Connect, list what the server offers, then keep the session open until the
        transport ends (returning why) or the connection is closed (cancelled)."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._slot.release_after, start_slots.HOLD_SECONDS)
            if self._installing and self._package is not None:
                tasks.start_soon(self._watch_install, self._package, scope)
            reason = await self._session(scope, tasks)
            tasks.cancel_scope.cancel()
        return reason

    async def _session(self, scope: anyio.CancelScope, tasks: anyio.abc.TaskGroup) -> str:
        async with AsyncExitStack() as stack:
            client = Client(
                self._transport(),
                mode="auto" if self._modern else "legacy",
                elicitation_callback=self._on_elicit,
                message_handler=self._on_message,
                client_info=CLIENT_INFO,
                cache=None,
            )
            self._step = "initialize"
            await stack.enter_async_context(client)
            self._install_finished(scope)
            self.protocol_version = client.protocol_version
            if self._process is not None:
                self._process.exit_grace = EXIT_GRACE
            self._step = "tools/list"
            offers = await self._list_offers(client)
            self._slot.release()
            if self._process is not None:
                tasks.start_soon(self._process.started)
            scope.deadline = math.inf
            self._client = client
            self._set_offers(offers)
            self._attempt_done.set()
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tasks.start_soon(self._listen, client)
            return await self._serve_changes(client)

    async def _watch_install(self, run: PackageRun, scope: anyio.CancelScope) -> None:
        """While npx installs, the install budget applies; once the package is in its cache
        the server is starting, and its own timeout applies from then on."""
        if run.runner != "npx":
            return
        while self._installing and not is_installed(run, self._env):  # noqa: ASYNC110 (a directory)
            await anyio.sleep(INSTALL_POLL)
        self._install_finished(scope)

    def _install_finished(self, scope: anyio.CancelScope) -> None:
        if not self._installing:
            return
        self._installing = False
        self._budget = self.timeout
        scope.deadline = min(scope.deadline, anyio.current_time() + self.timeout)
        if self.status is ServerStatus.INSTALLING or self.detail:
            self._set(ServerStatus.CONNECTING, None)

    async def _list_offers(self, client: Client) -> _Offers:
        offers = _Offers()
        offers.tools = await _pages(client.list_tools, lambda r: r.tools)
        offers.warnings = list(self._skipped)
        capabilities = client.server_capabilities
        try:
            if capabilities.prompts is not None:
                offers.prompts = await _pages(client.list_prompts, lambda r: r.prompts)
        except (MCPError, ValidationError) as exc:
            offers.warnings.append(f"could not list its prompts: {_first_line(exc)}")
        try:
            if capabilities.resources is not None:
                offers.resources = await _pages(client.list_resources, lambda r: r.resources)
                offers.templates = await _pages(
                    client.list_resource_templates, lambda r: r.resource_templates
                )
        except (MCPError, ValidationError) as exc:
            offers.warnings.append(f"could not list its resources: {_first_line(exc)}")
        return offers

    async def _serve_changes(self, client: Client) -> str:
        while True:
            assert self._wake is not None
            await self._wake.wait()
            self._wake = anyio.Event()
            if self._transport_ended:
                self._client = None
                return await self._end_reason()
            if self._changed:
                self._changed = set()
                self._skipped = []
                # On failure the old lists stay; a dead transport is noticed above.
                with anyio.move_on_after(self.timeout), suppress(MCPError, ValidationError):
                    self._set_offers(await self._list_offers(client))

    async def _listen(self, client: Client) -> None:
        """2026-07-28 servers announce list changes on a ``subscriptions/listen`` stream."""
        with suppress(Exception):
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as subscription:
                async for event in subscription:
                    if isinstance(
                        event, ToolsListChanged | PromptsListChanged | ResourcesListChanged
                    ):
                        self._changed.add(type(event).__name__)
                        self._wake_up()

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[TransportStreams]:
        async with AsyncExitStack() as stack:
            read, write = await self._open(stack)
            watched = _WatchedStreams(read, write, self._on_transport_end, self._sanitize_tools)
            yield watched.read, watched.write

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
                open_stdio_server(
                    spec.command,
                    spec.args,
                    env=env,
                    cwd=cwd,
                    log=logging.getLogger(f"bassi.server.{self.name}"),
                )
            )
            return read, write
        auth = self._auth(spec) if self._auth is not None else None
        client_factory = self._http_client_factory(spec, auth)
        if spec.type == "sse":
            return await stack.enter_async_context(
                sse_client(
                    spec.url,
                    timeout=spec.timeout,
                    sse_read_timeout=HTTP_READ_TIMEOUT,
                    httpx_client_factory=client_factory,
                    auth=auth,
                )
            )
        client = await stack.enter_async_context(client_factory())
        return await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))

    def _http_client_factory(
        self, spec: HttpServerConfig, auth: httpx2.Auth | None
    ) -> Callable[..., httpx2.AsyncClient]:
        async def record_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_code = response.status_code
                challenge = response.headers.get("www-authenticate", "")
                self._bearer_challenge = challenge.lower().startswith("bearer")
                self._http_status = f"HTTP {response.status_code} {response.reason_phrase}"

        def factory(*_: object, **__: object) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=dict(spec.headers),
                timeout=httpx2.Timeout(spec.timeout, read=HTTP_READ_TIMEOUT),
                event_hooks={"response": [record_status]},
                auth=auth,
            )

        return factory

    def _sanitize_tools(self, result: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/list`` answer with every tool that is not a valid MCP tool taken out and
        named in a warning, so one bad definition does not cost the server its other tools."""
        tools = result.get("tools")
        if not isinstance(tools, list):
            return result
        version = self.protocol_version or LATEST_HANDSHAKE_VERSION
        kept = []
        for index, tool in enumerate(tools):
            foreground.give_way()
            try:
                wire_methods.validate_server_result(
                    "tools/list", version, {**result, "tools": [tool]}
                )
                types.Tool.model_validate(tool, by_name=False)
            except (ValidationError, ValueError, KeyError, TypeError) as exc:
                name = tool.get("name") if isinstance(tool, dict) else None
                label = (
                    f"tool '{one_line(name, 80)}'"
                    if isinstance(name, str)
                    else f"tool #{index + 1}"
                )
                self._skipped.append(f"{label} skipped: not a valid MCP tool ({_first_line(exc)})")
                continue
            kept.append(tool)
        return {**result, "tools": kept}

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._changed.add("tools")
        elif isinstance(message, types.PromptListChangedNotification):
            self._changed.add("prompts")
        elif isinstance(message, types.ResourceListChangedNotification):
            self._changed.add("resources")
        else:
            return
        self._wake_up()

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        handler = self._elicitation() if self._elicitation is not None else None
        if handler is None:
            # Nobody is there to answer (``bassi tools`` in a shell): say no, don't hang.
            return types.ElicitResult(action="decline")
        with self._calls_paused():
            try:
                return await handler(ElicitationRequest(self.name, params))
            except Exception:
                logger.exception("elicitation handler failed for server %s", self.name)
                return types.ElicitResult(action="cancel")

    @contextmanager
    def _calls_paused(self) -> Iterator[None]:
        """While the person answers, the deadlines of calls in flight stand still."""
        now = anyio.current_time()
        left = {}
        for call in self._calls:
            if call.scope.deadline != math.inf:
                left[id(call)] = call.scope.deadline - now
                call.scope.deadline = math.inf
        try:
            yield
        finally:
            resumed = anyio.current_time()
            for call in self._calls:
                if id(call) in left:
                    call.scope.deadline = resumed + left[id(call)]

    def _on_transport_end(self) -> None:
        self._transport_ended = True
        self._wake_up()

    def _wake_up(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _set_offers(self, offers: _Offers) -> None:
        unique: dict[str, types.Tool] = {}
        for tool in offers.tools:
            unique.setdefault(tool.name, tool)
        self.tools = tuple(unique.values())
        self.prompts = tuple(PromptInfo.from_mcp(self.name, p) for p in offers.prompts)
        self.resources = tuple(ResourceInfo.from_mcp(self.name, r) for r in offers.resources)
        self.templates = tuple(
            ResourceTemplateInfo.from_mcp(self.name, t) for t in offers.templates
        )
        self.warnings = tuple(offers.warnings)
        self._set(ServerStatus.CONNECTED, None)

    def _set(self, status: ServerStatus, error: str | None, detail: str | None = None) -> None:
        """``error`` and ``detail`` are shown and logged: a stderr tail or a URL in them may
        repeat what the configuration took from the environment, so that is masked here,
        once for all. A change of status or error goes to the log."""
        mask = self.spec.expanded.mask
        error = None if error is None else mask(error)
        if (status, error) != (self.status, self.error):
            log_status(logger, self.name, status, error)
        self.status, self.error = status, error
        self.detail = None if detail is None else mask(detail)
        if not status.starting and status is not ServerStatus.CONNECTED:
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

    def _timeout_reason(self, budget: float) -> str:
        if self._installing and self._package is not None:
            step = f"while installing {self._package.package}"
        else:
            step = {
                "starting": "while starting",
                "initialize": "waiting for its answer to initialize",
                "tools/list": "while listing its tools",
            }[self._step]
        reason = f"timed out after {budget:g} s {step}"
        if self._http_status:
            reason += f" ({self._http_status})"
        return self._with_stderr(reason, self._process)

    def _outcome(self, exc: BaseException) -> _Outcome:
        """What a failed start means: the reason, and whether trying again may help."""
        cause = _root_cause(exc)
        spec = self.spec
        if isinstance(cause, SignInRequired) or self._wants_sign_in():
            why = str(cause) if isinstance(cause, SignInRequired) else "the server answered 401"
            return _Outcome(f"needs sign-in: {why}", needs_auth=True)
        if isinstance(cause, _ConnectError):
            return _Outcome(str(cause))
        if (
            isinstance(cause, MCPError)
            and cause.code == types.UNSUPPORTED_PROTOCOL_VERSION
            and not self._modern
            and self._step == "initialize"
        ):
            return _Outcome("speaks only the 2026-07-28 protocol", modern=True)
        # An answer bassi could not use is the reason, even if the server then exited
        # (it does, once bassi closes its input).
        if isinstance(cause, ValidationError):
            return _Outcome(
                self._with_stderr(
                    f"sent an invalid answer to {self._step}: {_first_line(cause)}", self._process
                )
            )
        if self._http_status and isinstance(cause, MCPError):
            return _Outcome(
                f"{self._http_status} from {_url(spec)}",
                retry=_transient_status(self._http_code or 0),
            )
        if isinstance(cause, MCPError) and cause.code != types.CONNECTION_CLOSED:
            return _Outcome(
                self._with_stderr(f"{self._step} failed: {cause.error.message}", self._process)
            )
        if self._process is not None and (exit_text := self._process.exit_description()):
            return _Outcome(self._with_stderr(exit_text, self._process), retry=True)
        if isinstance(spec, StdioServerConfig) and isinstance(cause, OSError):
            if isinstance(cause, FileNotFoundError) and cause.filename in (spec.command, None):
                return _Outcome(f"command not found: {spec.command}")
            if isinstance(cause, PermissionError):
                return _Outcome(f"permission denied running {spec.command}")
            return _Outcome(f"could not start {spec.command}: {cause.strerror or cause}")
        if isinstance(cause, httpx2.HTTPStatusError):
            response = cause.response
            return _Outcome(
                f"HTTP {response.status_code} {response.reason_phrase} from {response.url}",
                retry=_transient_status(response.status_code),
            )
        if isinstance(cause, httpx2.TimeoutException):
            return _Outcome(f"timed out after {self.timeout:g} s waiting for {_url(spec)}")
        if isinstance(cause, httpx2.HTTPError):
            return _Outcome(f"cannot reach {_url(spec)}: {_first_line(cause)}", retry=True)
        if self._http_status:
            return _Outcome(
                f"{self._http_status} from {_url(spec)}",
                retry=_transient_status(self._http_code or 0),
            )
        if isinstance(cause, MCPError):
            return _Outcome(
                self._with_stderr(f"{self._step} failed: connection closed", self._process),
                retry=True,
            )
        return _Outcome(
            self._with_stderr(
                f"{self._step} failed: {type(cause).__name__}: {_first_line(cause)}",
                self._process,
            )
        )

    def _wants_sign_in(self) -> bool:
        """A 401 that OAuth can answer: the server asked for a bearer token, or it was given
        no credentials of the person's own (a wrong configured key is a failure)."""
        if self._http_code != 401 or not isinstance(self.spec, HttpServerConfig):
            return False
        return self._bearer_challenge or not self.spec.headers

    @staticmethod
    def _with_stderr(reason: str, process: ServerProcess | None) -> str:
        if process is None:
            return reason
        if process.noise:
            reason += f"; it wrote text that is not MCP to stdout: {process.noise[-1]!r}"
        tail = process.stderr_tail()
        return f"{reason}\nlast lines of its stderr:\n{tail}" if tail else reason


_Page = TypeVar("_Page")
_Item = TypeVar("_Item")


async def _pages(
    fetch: Callable[..., Awaitable[_Page]], items: Callable[[_Page], Sequence[_Item]]
) -> list[_Item]:
    """Every page of a list request. A server that repeats a cursor would loop forever, so
    that ends the listing."""
    found: list[_Item] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page = await fetch(cursor=cursor)
        found.extend(items(page))
        cursor = getattr(page, "next_cursor", None)
        if cursor is None or cursor in seen:
            return found
        seen.add(cursor)


def _transient_status(code: int) -> bool:
    return code in (408, 429) or code >= 500


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


class _WatchedStreams:
    """The session's streams, passed through unchanged except that the end of the read
    stream is reported (the session has no hook of its own for "the server went away") and
    answers to ``tools/list`` are sanitized before the session validates them. Sanitizing
    validates every tool on its own: that runs in a worker thread, a tool at a time, because
    thirty servers answering with hundreds of tools each would hold the event loop for
    seconds."""

    def __init__(
        self,
        read: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        on_end: Callable[[], None],
        sanitize: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        self._listing: set[types.RequestId] = set()
        self.read = _WatchedRead(read, on_end, self._filter)
        self.write = _WatchedWrite(write, self._sent)
        self._sanitize = sanitize

    def _sent(self, message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, types.JSONRPCRequest) and inner.method == "tools/list":
            self._listing.add(inner.id)

    async def _filter(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if not isinstance(item, SessionMessage):
            return item
        inner = item.message
        if not isinstance(inner, types.JSONRPCResponse | types.JSONRPCError):
            return item
        if inner.id not in self._listing:
            return item
        self._listing.discard(inner.id)
        if isinstance(inner, types.JSONRPCError):
            return item
        result = await anyio.to_thread.run_sync(self._sanitize, inner.result)
        return SessionMessage(inner.model_copy(update={"result": result}), metadata=item.metadata)


class _Closable(Protocol):
    async def aclose(self) -> None: ...


_Inner = TypeVar("_Inner", bound=_Closable)


class _Closing(Generic[_Inner]):
    """What both wrapped streams share: closing one closes the stream inside, and used as a
    context manager it closes on the way out."""

    _inner: _Inner

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _WatchedRead(_Closing[ReadStream[SessionMessage | Exception]]):
    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        on_end: Callable[[], None],
        transform: Callable[[SessionMessage | Exception], Awaitable[SessionMessage | Exception]],
    ) -> None:
        self._inner = inner
        self._on_end = on_end
        self._transform = transform

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._transform(await self._inner.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _WatchedWrite(_Closing[WriteStream[SessionMessage]]):
    def __init__(
        self, inner: WriteStream[SessionMessage], on_send: Callable[[SessionMessage], None]
    ) -> None:
        self._inner = inner
        self._on_send = on_send

    async def send(self, item: SessionMessage, /) -> None:
        self._on_send(item)
        await self._inner.send(item)


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
