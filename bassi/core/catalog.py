"""The catalog: every server bassi knows, connected once, with one registry and one index.

This is the facade the app, the agent bridge and ``bassi tools``/``bassi mcp`` share. Every
server is registered before it starts connecting (the app registers them as it is made, so its
first screen shows them all), and connected concurrently in the background; a slow or broken
server delays only itself. External servers' sessions live on a thread of their own
(``bassi.core.connection_thread``): their listing, checking and the catalog's records of their
tools are made there, and this loop receives finished data. Making and registering a
catalog imports neither ``mcp`` nor the search engine: ``start`` imports them in a thread, so
the first screen is drawn without waiting for them. The registry and the search index follow
each server as it connects, fails, is reconnected, disabled or enabled, and whenever it
announces that its tools, prompts or resources changed (the index does its work in a thread
of its own, so a connecting server never stalls the event loop); each connected server's tool
schemas are checked in the background (see ``bassi.core.validation``), the invalid ones noted
in the registry.

It is also the server manager: reconnect (re-reading ``.mcp.json``), disable and enable for
this session or for good, sign in and out. What needs a person (a sign-in's browser step, a
server's elicitation) goes through handlers the UI or the shell installs; the core never
opens a window itself.

Servers come from three places: bassi's own (in process), the user's own servers file
(``config_dir/mcp.json``, which a repository cannot write) and the project's ``.mcp.json``
(or ``--mcp-config``). The first two are trusted. A project server the user has not
approved as it is now (``bassi.core.trust``) is registered as pending and never started,
whatever entry point built the catalog, until ``approve`` is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import importlib.util
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from bassi.core import catalog_cache
from bassi.core.connection_thread import ConnectionState, ConnectionThread, ThreadedConnection
from bassi.core.masking import display_target, identity
from bassi.core.mcp_config import (
    ConfigProblem,
    HttpServerConfig,
    ServerConfig,
    load_mcp_config,
)
from bassi.core.offers import OfferError
from bassi.core.registry import Registry, ServerStatus
from bassi.core.secrets import mask_in_log
from bassi.core.server_memory import ServerMemory
from bassi.core.settings import Settings
from bassi.core.tools import META_SERVER, Origin, ToolInfo
from bassi.core.trust import PendingServer, ProjectTrust, Standing
from mcp_servers import SHIPPED_SERVERS, ShippedServer

if TYPE_CHECKING:
    # The MCP client and the search engine are imported when servers are connected, not
    # with the catalog: ``bassi tools`` answering from its cache never needs the client
    # (importing it costs ~1 s), and the app's first screen needs neither.
    from mcp import types

    from bassi.core.connections import (
        ElicitationHandler,
        ServerConnection,
        ServerSpec,
    )
    from bassi.core.in_process import ShippedConnection
    from bassi.core.oauth import OAuth, OpenUrl
    from bassi.core.search import ToolIndex
    from bassi.core.validation import SchemaChecks

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    Connection: TypeAlias = ServerConnection | ShippedConnection | ThreadedConnection

_SHIPPED_CODE = Path(str(importlib.util.find_spec("mcp_servers").origin)).parent  # type: ignore[union-attr]
"""Where the servers bassi ships live (found without importing them)."""

IN_PROCESS_TARGET = "in-process"
"""What the catalog shows as where a server bassi ships runs."""

INDEXING_MODULES = ("bassi.core.search", "bassi.core.validation")
"""What a connected server's tools go through (the index, the schema checker), imported in a
thread by ``start`` once bassi's own servers are connected."""
OWN_SERVERS_FIRST = 2.0
"""Seconds at most that loading the index waits for bassi's own servers to be defined."""
CLIENT_MODULES = ("bassi.core.connections", "bassi.core.oauth")
"""The MCP client (``mcp``: about a second) and its sign-in code, imported in a thread by
``start`` after those, when there are other servers to connect. Connecting the first one asks
for both; imported then, on the event loop, the OAuth models alone froze the screen for 40-60
ms (``bench/loop_lag.py``)."""

USER_SERVERS_FILE = "mcp.json"
"""The user's own servers file in ``config_dir``: trusted, like Claude Code's user scope."""


class NotApprovedError(PermissionError):
    """A project server the user has not approved was asked to start."""


ShippedFactory = Callable[[Path], Any]
"""Project directory -> a fresh server to run in process: a ``ShippedServer`` (called
directly), or an ``mcp.server.Server`` / ``MCPServer`` (over mcp's in-memory transport)."""
RESULTS_KEPT = 200
"""Results of recent calls kept for the UI to show in full (structured content, blocks)."""


@dataclass(frozen=True, slots=True)
class CallProgress:
    """A running call reported progress (``notifications/progress``)."""

    call_id: str
    """The CLI's tool-use id of the call, so the UI finds its block."""
    server: str
    tool: str
    progress: float
    total: float | None
    message: str | None


class CallWatch:
    """Progress of running calls and the full results of finished ones, by tool-use id.

    The model gets a tool's result through the CLI, which flattens it; the UI wants the
    original (structured content, images, resources), so the catalog keeps it here."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[CallProgress], None]] = []
        self._results: OrderedDict[str, types.CallToolResult] = OrderedDict()

    def subscribe(self, listener: Callable[[CallProgress], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def progress(self, update: CallProgress) -> None:
        for listener in list(self._listeners):
            listener(update)

    def finished(self, call_id: str, result: types.CallToolResult) -> None:
        self._results[call_id] = result
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)

    def result(self, call_id: str) -> types.CallToolResult | None:
        return self._results.get(call_id)


class Catalog:
    def __init__(
        self,
        settings: Settings,
        *,
        shipped: Mapping[str, ShippedFactory] | None = None,
        index: ToolIndex | None = None,
        trust: ProjectTrust | None = None,
    ) -> None:
        if shipped is None:
            shipped = SHIPPED_SERVERS
        self.settings = settings
        self.registry = Registry()
        self._index = index
        self._schemas: SchemaChecks | None = None
        self.trust = trust if trust is not None else ProjectTrust.load(settings)
        user_file = settings.config_dir / USER_SERVERS_FILE
        user = load_mcp_config(user_file, settings.env, project_dir=settings.project_dir)
        project = load_mcp_config(
            settings.mcp_config_path,
            settings.env,
            project_dir=settings.project_dir,
            required=settings.mcp_config is not None,
        )
        self.problems: list[ConfigProblem] = [*user.problems, *project.problems]
        """Problems in the servers files, for display; the servers they name were skipped
        (errors) or loaded anyway (warnings)."""
        self._shipped = dict(shipped)
        self._external: dict[str, ServerConfig] = {}
        self._trusted: set[str] = set()
        """External servers from the user's own file."""
        for path, config, trusted in (
            (user_file, user, True),
            (settings.mcp_config_path, project, False),
        ):
            for name, server in config.servers.items():
                if clash := self._taken(name, user_file):
                    self.problems.append(ConfigProblem(path, clash, name))
                    continue
                self._external[name] = server
                mask_in_log(server.expanded)
                if trusted:
                    self._trusted.add(name)
        self._connections: dict[str, Connection] = {}
        self._connection_thread: ConnectionThread | None = None
        """Where the external servers' connections live, off the UI's loop (made with the
        first of them)."""
        self._started = False
        self.memory = ServerMemory.load(settings.state_dir)
        self.calls = CallWatch()
        self.elicitation_handler: ElicitationHandler | None = None
        """Installed by whoever can ask the person (the app); without one, servers that ask
        for input are told no."""
        self._to_connect: list[str] | None = None
        """The servers ``register`` found startable; None until it ran."""
        self._registered_all = False
        self._connecting = asyncio.Event()
        """Set once ``start`` has begun every connection."""
        self._unindexed: dict[str, list[ToolInfo]] | None = {}
        """Tools of servers that connected while ``start`` was still loading the index and
        the schema checker; None once they are loaded."""

    @property
    def schemas(self) -> SchemaChecks:
        """The tools' compiled schemas, made on first use (it imports jsonschema)."""
        if self._schemas is None:
            from bassi.core.validation import SchemaChecks

            self._schemas = SchemaChecks()
        return self._schemas

    @property
    def index(self) -> ToolIndex:
        """The search index, made on first use (it imports the search engine)."""
        if self._index is None:
            from bassi.core.search import ToolIndex

            self._index = ToolIndex(self.settings.project_cache_dir / "index", helpers=True)
        return self._index

    def waiting(self) -> list[str]:
        """Servers whose tools a search cannot see yet: still starting (connecting, or
        installing through npx first), or connected and still being indexed."""
        connecting = [e.name for e in self.registry.servers() if e.status.starting]
        if self._unindexed is not None:
            return list(dict.fromkeys([*connecting, *self._unindexed]))
        return list(dict.fromkeys([*connecting, *self.index.indexing]))

    @cached_property
    def oauth(self) -> OAuth:
        """Sign-in tokens of HTTP servers, made at the first connection (the module is one of
        ``CLIENT_MODULES``)."""
        from bassi.core.oauth import OAuth

        return OAuth(self.settings.config_dir)

    def config_for(self, server: str) -> ServerConfig | None:
        """The ``.mcp.json`` entry of an external server (None for bassi's own)."""
        return self._external.get(server)

    def _taken(self, name: str, user_file: Path) -> str | None:
        if name in self._shipped:
            return "this name belongs to a server bassi ships; rename the entry"
        if name == META_SERVER:
            return (
                "this name is bassi's own (its tool_search, tool_load and other meta-tools); "
                "rename the entry"
            )
        if name in self._trusted:
            return f"your own servers file ({user_file}) defines this server; this entry is ignored"
        return None

    def approved(self, server: str) -> bool:
        """Whether ``server`` may start: bassi's own and the user's servers always may, a
        project server once the user approved it as it is configured now."""
        config = self._external.get(server)
        if config is None or server in self._trusted:
            return True
        return self.trust.server_standing(server, config) is Standing.APPROVED

    def pending(self) -> list[PendingServer]:
        """Project servers waiting for the user's approval (disabled ones wait for nothing)."""
        return [
            PendingServer(
                name,
                config.display_target,
                self.trust.server_standing(name, config),
                config.display_details,
            )
            for name, config in self._external.items()
            if not config.disabled and not self.approved(name)
        ]

    def approve(self, servers: Iterable[str] | None = None) -> list[str]:
        """Approve project servers (all pending ones when ``servers`` is None) as they are
        configured now, and start them if the catalog runs. Returns the names approved.
        Raises KeyError for a name that is no external server."""
        names = [p.name for p in self.pending()] if servers is None else list(servers)
        for name in names:
            if name not in self._external:
                raise KeyError(f"unknown server '{name}'")
        approved = []
        for name in names:
            if self.approved(name):
                continue
            config = self._external[name]
            self.trust.approve_server(name, config)
            approved.append(name)
            if self._started and not config.disabled:
                self.registry.set_status(name, ServerStatus.CONNECTING)
                self._connect(config)
        return approved

    def register(self, *, skip_known_failures: bool = False, only: set[str] | None = None) -> None:
        """Put every server (or those in ``only``) in the registry, connecting none, so they
        can be shown at once; ``start`` connects them (and registers first if this did not
        run). With ``skip_known_failures`` a server whose last start failed with the same
        command or URL is shown as failed with that reason, and not started (``bassi mcp
        list``)."""
        if self._to_connect is not None:
            raise RuntimeError("the catalog's servers were already registered")
        self._to_connect = self._register_all(only, skip_known_failures=skip_known_failures)
        self._registered_all = only is None

    async def start(
        self, *, skip_known_failures: bool = False, only: set[str] | None = None
    ) -> None:
        """Register the servers as ``register`` does, unless that already ran, and start
        connecting them; returns without waiting for them."""
        if self._started:
            raise RuntimeError("the catalog was already started")
        self._started = True
        if self._to_connect is None:
            self.register(skip_known_failures=skip_known_failures, only=only)
        names = self._to_connect or []
        # bassi's own servers first: they need neither the MCP client nor the index to be
        # listed, and are connected while those load.
        clients = [name for name in names if not self._called_directly(name)]
        await asyncio.to_thread(import_modules, ("bassi.core.in_process",))
        own = [name for name in names if name not in clients]
        for name in own:
            self._connect(self._spec(name))
        if own:
            # Defining them takes a moment of CPU that loading the index would only share.
            await asyncio.wait(
                [asyncio.ensure_future(self._connections[name].wait_attempt()) for name in own],
                timeout=OWN_SERVERS_FIRST,
            )
        await asyncio.to_thread(import_modules, INDEXING_MODULES)
        settle_heap()
        if self._registered_all:
            # Servers that left the configuration, were disabled or wait for approval leave
            # the index and its caches.
            self.index.submit_retain(
                [
                    entry.name
                    for entry in self.registry.servers()
                    if entry.status not in (ServerStatus.DISABLED, ServerStatus.PENDING)
                ]
            )
        unindexed, self._unindexed = self._unindexed, None
        for server, tools in (unindexed or {}).items():
            self._index_tools(server, tools)
        if clients:
            await asyncio.to_thread(import_modules, CLIENT_MODULES)
            settle_heap()
        for name in clients:
            self._connect(self._spec(name))
        self._connecting.set()

    def start_from_cache(self, cached: Mapping[str, catalog_cache.CachedServer]) -> bool:
        """Register every server as ``start`` would, but give each server ``start`` would
        connect the tools and status it had when ``cached`` was written, starting nothing;
        the index is brought up to date before this returns. False, with nothing done, when
        a server that would be connected has no entry for its current configuration."""
        if self._started:
            raise RuntimeError("the catalog was already started")
        wanted = {name: self.fingerprint(name) for name in self._startable()}
        if any(name not in cached or cached[name].fingerprint != f for name, f in wanted.items()):
            return False
        self._started = True
        self._unindexed = None
        for name in self._register_all(None, skip_known_failures=False):
            entry = cached[name]
            self.registry.set_tools(name, entry.tool_infos(name))
            if entry.status is not ServerStatus.CONNECTED:
                self.registry.set_status(name, entry.status, entry.error)
        self.index.sync(self.registry)
        return True

    def save_cache(self) -> None:
        """Remember what every connected or failed server listed, for ``start_from_cache``."""
        entries = {e.name: e for e in self.registry.servers()}
        catalog_cache.save(
            self.settings.project_cache_dir,
            {
                name: (self.fingerprint(name), entries[name])
                for name in self._connections
                if entries[name].status in (ServerStatus.CONNECTED, ServerStatus.FAILED)
            },
        )

    def fingerprint(self, server: str) -> str:
        """What a server's tools depend on: its configuration (an external server) or the
        code of the servers bassi ships."""
        digest = hashlib.sha256(server.encode())
        config = self._external.get(server)
        if config is not None:
            digest.update(repr(config).encode("utf-8", "surrogatepass"))
        else:
            for path in sorted(_SHIPPED_CODE.rglob("*.py")):
                stat = path.stat()
                digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return digest.hexdigest()[:32]

    def _startable(self) -> list[str]:
        """The servers ``start`` would connect: not disabled and, a project server, approved."""
        shipped = [name for name in self._shipped if name not in self.memory.disabled]
        return [
            *shipped,
            *(
                name
                for name, config in self._external.items()
                if not config.disabled and name not in self.memory.disabled and self.approved(name)
            ),
        ]

    def _register_all(self, only: set[str] | None, *, skip_known_failures: bool) -> list[str]:
        """Put every server (or those in ``only``) in the registry; returns the names of the
        ones to connect."""
        names: list[str] = []
        for name in self._shipped:
            if only is not None and name not in only:
                continue
            self.registry.add_server(name, Origin.IN_PROCESS, target=IN_PROCESS_TARGET)
            if name in self.memory.disabled:
                self.registry.set_status(name, ServerStatus.DISABLED)
            else:
                names.append(name)
        for name, config in self._external.items():
            if (only is None or name in only) and self._register(
                name, config, skip_known_failures=skip_known_failures
            ):
                names.append(name)
        return names

    def server_names(self) -> list[str]:
        """bassi's own servers, then those of ``.mcp.json``."""
        return [*self._shipped, *self._external]

    def display_target(self, server: str) -> str:
        """Where the server runs, with secrets masked: safe to show and to log."""
        config = self._external.get(server)
        return IN_PROCESS_TARGET if config is None else display_target(config)

    def _register(self, name: str, config: ServerConfig, *, skip_known_failures: bool) -> bool:
        """Add a server of the files to the registry; True when it is to be started, False
        when it is disabled, (a project server) waits for the user's approval, or (with
        ``skip_known_failures``) failed last time as it is configured now."""
        if config.disabled or name in self.memory.disabled:
            status = ServerStatus.DISABLED
        elif self.approved(name):
            status = ServerStatus.CONNECTING
        else:
            status = ServerStatus.PENDING
        self.registry.add_server(
            name,
            Origin.EXTERNAL,
            target=display_target(config),
            always_load=config.always_load,
            status=status,
        )
        if status is not ServerStatus.CONNECTING:
            return False
        known = self.memory.known_failure(name, identity(config)) if skip_known_failures else None
        if known is not None:
            self.registry.set_status(name, ServerStatus.FAILED, known.error)
            return False
        return True

    def _spec(self, name: str) -> ServerSpec:
        factory = self._shipped.get(name)
        if factory is not None:
            from bassi.core.in_process import InProcessServer

            make = factory.define if isinstance(factory, ShippedServer) else factory
            return InProcessServer(
                name,
                partial(make, self.settings.project_dir),
                display_target=IN_PROCESS_TARGET,
                tool_timeout=self.settings.tool_timeout,
            )
        config = self._external.get(name)
        if config is None:
            raise KeyError(f"unknown server '{name}'")
        return config

    def connection(self, server: str) -> Connection | None:
        """The live connection of a server (None when it is disabled or unknown)."""
        return self._connections.get(server)

    async def wait_ready(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 (an upper bound, not a request timeout)
    ) -> bool:
        """Until every server's current connection attempt is connected or failed, or
        ``timeout`` seconds passed. True when all attempts finished. Each server's own
        timeout already bounds its attempt. A catalog about to start (the app starts it
        once its first screen is drawn, and ``start`` loads ``mcp`` first) is waited for,
        within ``timeout``; without one, only a catalog that was started."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        if self._started or timeout is not None:
            try:
                await asyncio.wait_for(self._connecting.wait(), timeout)
            except TimeoutError:
                return False
        if timeout is not None:
            timeout = max(0.0, timeout - (loop.time() - began))
        attempts = [c.wait_attempt() for c in self._connections.values()]
        if attempts:
            _done, pending = await asyncio.wait(
                [asyncio.ensure_future(a) for a in attempts], timeout=timeout
            )
            for waiter in pending:
                waiter.cancel()
            if pending:
                return False
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - began))
        return await asyncio.to_thread(self.index.wait_indexed, left)

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the call's own deadline)
        call_id: str | None = None,
    ) -> types.CallToolResult:
        """Forward a call over the server's open session. The server's result comes back as
        it was sent (error results included); a server that is unknown, disabled, down,
        dies during the call or does not answer within ``timeout`` (default: the server's
        ``toolTimeout``, else ``BASSI_TOOL_TIMEOUT``) gives an error result saying so, and
        one that died is marked failed. ``call_id`` (the CLI's tool-use id) files the call's
        progress and result in ``calls``."""
        from bassi.core.connections import error_result

        connection = self._connections.get(server)
        if connection is None:
            if not self.approved(server):
                return error_result(f"server '{server}' waits for the user's approval")
            if server in self._external or server in self._shipped:
                return error_result(f"server '{server}' is disabled")
            return error_result(f"unknown server '{server}'")
        if timeout is None:
            timeout = connection.spec.tool_timeout or self.settings.tool_timeout

        def progress(value: float, total: float | None, message: str | None) -> None:
            if call_id is not None:
                self.calls.progress(CallProgress(call_id, server, tool, value, total, message))

        result = await connection.call_tool(tool, arguments, timeout=timeout, progress=progress)
        if call_id is not None:
            self.calls.finished(call_id, result)
        return result

    def cancel_calls(self) -> int:
        """Cancel every external call in flight (the user interrupted); returns how many."""
        return sum(c.cancel_calls() for c in self._connections.values())

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str]
    ) -> types.GetPromptResult:
        """A prompt rendered by its server. Raises OfferError."""
        return await self._live(server).get_prompt(name, arguments)

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        """A resource's contents. Raises OfferError."""
        return await self._live(server).read_resource(uri)

    def _live(self, server: str) -> Connection:
        connection = self._connections.get(server)
        if connection is None:
            raise OfferError(f"server '{server}' is not connected")
        return connection

    async def check_arguments(
        self, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> types.CallToolResult | None:
        """The error result for a call whose arguments break the tool's input schema, or
        None when the call may be forwarded (valid arguments, or a schema that cannot be
        checked against, or a tool the registry does not know: the server answers that)."""
        info = self.registry.get(server, tool)
        if info is None:
            return None
        before = self.schemas.known(info)
        refused = await self.schemas.refusal(info, arguments)
        if self.schemas.known(info) is not before:  # compiled just now, or given up on
            self._note_schema_problems(server)
        return refused

    async def reconnect(self, server: str) -> None:
        """Re-read the servers file, stop the server if it runs and connect again, in the
        background (a disabled server is started, for this session). Its tools stay
        listed, unavailable, until it is back."""
        self.reload_config()
        spec = self._spec(server)
        if not self.approved(server):
            raise NotApprovedError(f"server '{server}' waits for your approval")
        connection = self._connections.pop(server, None)
        if connection is not None:
            await connection.close()
        self._connect(spec)

    def reload_config(self) -> list[str]:
        """Read ``.mcp.json`` again: changed entries apply at their next (re)connect, new
        servers are registered and started. Returns the names of the new servers."""
        config = load_mcp_config(
            self.settings.mcp_config_path,
            self.settings.env,
            project_dir=self.settings.project_dir,
            required=self.settings.mcp_config is not None,
        )
        self.problems = list(config.problems)
        added = []
        for name, server in config.servers.items():
            if name in self._shipped or name in self._trusted:
                continue
            known = name in self._external
            self._external[name] = server
            mask_in_log(server.expanded)
            if not known:
                added.append(name)
                if self._started and self._register(name, server, skip_known_failures=False):
                    self._connect(server)
        return added

    async def disable(self, server: str, *, for_good: bool = False) -> None:
        """Stop the server and take its tools, prompts and resources out of the catalog, the
        index and the model's view. ``for_good`` remembers it for this project."""
        self._spec(server)
        connection = self._connections.pop(server, None)
        if connection is not None:
            await connection.close()
        if for_good:
            self.memory.set_disabled(server, True)
        if self._unindexed is not None:
            self._unindexed.pop(server, None)
        self.index.submit_removal(server)
        self.registry.forget_offers(server)
        self.registry.set_status(server, ServerStatus.DISABLED)

    async def enable(self, server: str, *, for_good: bool = False) -> None:
        """Start a disabled server. ``for_good`` also forgets a lasting "disabled"."""
        if for_good:
            self.memory.set_disabled(server, False)
        if server not in self._connections:
            await self.reconnect(server)

    def http_config(self, server: str) -> HttpServerConfig:
        config = self._external.get(server)
        if not isinstance(config, HttpServerConfig):
            raise ValueError(
                f"server '{server}' is not an HTTP server: there is nothing to sign in to"
            )
        return config

    async def sign_in(self, server: str, open_url: OpenUrl) -> None:
        """The browser sign-in for an HTTP server, then a reconnect with the new tokens.
        Raises SignInError (or ValueError for a server that is not HTTP)."""
        self.reload_config()
        await self.oauth.sign_in(self.http_config(server), open_url)
        await self.reconnect(server)

    async def sign_out(self, server: str) -> bool:
        """Forget the server's tokens and reconnect without them. True if it was signed in."""
        had = self.oauth.sign_out(self.http_config(server))
        if server in self._connections:
            await self.reconnect(server)
        return had

    async def close(self) -> None:
        """Close every session and stop every server process."""
        if self._schemas is not None:
            self._schemas.close()
        await asyncio.gather(*(c.close() for c in self._connections.values()))
        if self._connection_thread is not None:
            await self._connection_thread.stop()

    async def __aenter__(self) -> Catalog:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _called_directly(self, server: str) -> bool:
        """A server bassi ships: listed and called without an MCP session."""
        return isinstance(self._shipped.get(server), ShippedServer)

    def _connect(self, spec: ServerSpec) -> None:
        connection: Connection
        if self._called_directly(spec.name):
            from bassi.core.in_process import InProcessServer, ShippedConnection

            assert isinstance(spec, InProcessServer)
            connection = ShippedConnection(spec, on_change=self._connection_changed)
        else:
            from bassi.core.connections import ServerConnection

            def session(
                on_change: Callable[[ServerConnection], None],
                elicitation: Callable[[], ElicitationHandler | None],
            ) -> ServerConnection:
                return ServerConnection(
                    spec,
                    env=self.settings.env,
                    project_dir=self.settings.project_dir,
                    on_change=on_change,
                    elicitation=elicitation,
                    auth=self.oauth.auth_for,
                    install_timeout=self.settings.install_timeout,
                )

            def asks() -> ElicitationHandler | None:
                return self.elicitation_handler  # the one installed when the server asks

            if isinstance(spec, ServerConfig):
                if self._connection_thread is None:
                    self._connection_thread = ConnectionThread()
                connection = ThreadedConnection(
                    spec, self._connection_thread, session, self._connection_changed, asks
                )
            else:
                connection = session(self._connection_changed, asks)
        self._connections[spec.name] = connection
        connection.start()

    def _connection_changed(self, connection: Connection) -> None:
        """A server's status or tools changed. Whatever goes wrong in passing that on (a
        registry listener's bug, say) is logged: it says nothing about the server, which
        must not be marked failed for it."""
        try:
            self._follow(connection)
        except Exception:
            log.exception("passing on a change of server %r failed", connection.name)

    def _follow(self, connection: Connection) -> None:
        name = connection.name
        if self._connections.get(name) is not connection:
            return  # a connection being replaced (reconnect) or dropped (disable)
        view: ConnectionState | ServerConnection | ShippedConnection = (
            connection.state if isinstance(connection, ThreadedConnection) else connection
        )
        ended = view.status in (ServerStatus.FAILED, ServerStatus.CONNECTED)
        if ended and isinstance(connection.spec, ServerConfig):
            self.memory.record(name, identity(connection.spec), view.error)
        if view.status is not ServerStatus.CONNECTED:
            self.registry.set_status(name, view.status, view.error, detail=view.detail)
            return
        if isinstance(view, ConnectionState):
            tools = list(view.tools)  # made on the connection thread, nothing left to do here
        else:
            origin = self.registry.server(name).origin
            tools = [ToolInfo.from_mcp(name, t, origin) for t in view.tool_definitions()]
        if self._unindexed is None:
            self._index_tools(name, tools)
        else:
            self._unindexed[name] = tools
        self.registry.set_tools(
            name,
            tools,
            prompts=view.prompts,
            resources=view.resources,
            templates=view.templates,
            warnings=view.warnings,
        )
        settle_heap()

    def _index_tools(self, server: str, tools: list[ToolInfo]) -> None:
        """Searchable once the index's thread has them in; checked once the schema
        checker is done with them."""
        self.index.submit(server, tools)
        self._check_schemas(server, tools)

    def _check_schemas(self, server: str, tools: list[ToolInfo]) -> None:
        """Check the schemas in the background; the registry hears of invalid ones when
        the checker is done with the server. Even looking up schemas compiled before needs
        each definition's hash, which for hundreds of large schemas is too long to spend on
        the event loop: the thread computes them too."""
        loop = asyncio.get_running_loop()

        def compiled() -> None:
            with contextlib.suppress(RuntimeError):  # the app closed its loop meanwhile
                loop.call_soon_threadsafe(self._note_schema_problems, server)

        self.schemas.compile_soon(tools, compiled)

    def _note_schema_problems(self, server: str) -> None:
        entry = self.registry.server(server)
        problems = {
            tool.name: problem
            for tool in entry.tools
            if (problem := self.schemas.known_problem(tool)) is not None
        }
        self.registry.set_schema_problems(server, problems)


def settle_heap() -> None:
    """Take what exists now out of the garbage collector's sight (``gc.freeze``), once
    modules are imported or a server's tools are in the catalog: they live as long as the
    app, and with ten thousand tools a full collection walks most of a million objects again
    and again, a second or more with every thread stopped. The young generations are
    collected first, so what is frozen is mostly what stays; a cycle of garbage already old
    stays uncollected."""
    gc.collect(1)
    gc.freeze()


def import_modules(modules: Sequence[str]) -> None:
    """Import ``modules`` (in a worker thread: the event loop keeps drawing meanwhile)."""
    for module in modules:
        importlib.import_module(module)
