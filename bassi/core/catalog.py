"""The catalog: every server bassi knows, connected once, with one registry and one index.

This is the facade the app, the agent bridge and ``bassi tools`` share. Starting it registers
every server at once (so the UI can show them all while they connect) and connects them
concurrently in the background; a slow or broken server delays only itself. The registry
and the search index follow each server as it connects, fails, or is reconnected, and each
connected server's tool schemas are compiled in the background for checking calls (see
``bassi.core.validation``), the invalid ones noted in the registry.

Servers come from three places: bassi's own (in process), the user's own servers file
(``config_dir/mcp.json``, which a repository cannot write) and the project's ``.mcp.json``
(or ``--mcp-config``). The first two are trusted. A project server the user has not
approved as it is now (``bassi.core.trust``) is registered as pending and never started,
whatever entry point built the catalog, until ``approve`` is called.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from mcp import types

from bassi.core.connections import InProcessServer, ServerConnection, ServerSpec, error_result
from bassi.core.mcp_config import ConfigProblem, ServerConfig, load_mcp_config
from bassi.core.registry import Registry, ServerStatus
from bassi.core.search import ToolIndex
from bassi.core.secrets import mask_in_log
from bassi.core.settings import Settings
from bassi.core.tools import Origin, ToolInfo
from bassi.core.trust import PendingServer, ProjectTrust, Standing
from bassi.core.validation import SchemaChecks

USER_SERVERS_FILE = "mcp.json"
"""The user's own servers file in ``config_dir``: trusted, like Claude Code's user scope."""


class NotApprovedError(PermissionError):
    """A project server the user has not approved was asked to start."""


ShippedFactory = Callable[[Path], Any]
"""Project directory -> a fresh ``mcp.server.Server`` (or ``MCPServer``) to run in process."""


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
            from mcp_servers import SHIPPED_SERVERS

            shipped = SHIPPED_SERVERS
        self.settings = settings
        self.registry = Registry()
        self.index = index if index is not None else ToolIndex(settings.state_dir / "index")
        self.schemas = SchemaChecks()
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
        self._connections: dict[str, ServerConnection] = {}
        self._started = False

    def config_for(self, server: str) -> ServerConfig | None:
        """The ``.mcp.json`` entry of an external server (None for bassi's own)."""
        return self._external.get(server)

    def _taken(self, name: str, user_file: Path) -> str | None:
        if name in self._shipped:
            return "this name belongs to a server bassi ships; rename the entry"
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
            PendingServer(name, config.display_target, self.trust.server_standing(name, config))
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

    async def start(self) -> None:
        """Register every server and start connecting them; returns without waiting."""
        if self._started:
            raise RuntimeError("the catalog was already started")
        self._started = True
        for name, factory in self._shipped.items():
            spec = InProcessServer(name, partial(factory, self.settings.project_dir))
            self.registry.add_server(name, Origin.IN_PROCESS, target=spec.display_target)
            self._connect(spec)
        for name, config in self._external.items():
            if config.disabled:
                status = ServerStatus.DISABLED
            elif self.approved(name):
                status = ServerStatus.CONNECTING
            else:
                status = ServerStatus.PENDING
            self.registry.add_server(
                name,
                Origin.EXTERNAL,
                target=config.display_target,
                always_load=config.always_load,
                status=status,
            )
            if status is ServerStatus.CONNECTING:
                self._connect(config)

    async def wait_ready(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 (an upper bound, not a request timeout)
    ) -> bool:
        """Until every server's current connection attempt is connected or failed, or
        ``timeout`` seconds passed. True when all attempts finished. Each server's own
        timeout already bounds its attempt."""
        attempts = [c.wait_attempt() for c in self._connections.values()]
        if not attempts:
            return True
        _done, pending = await asyncio.wait(
            [asyncio.ensure_future(a) for a in attempts], timeout=timeout
        )
        for waiter in pending:
            waiter.cancel()
        return not pending

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (sent as the request's own timeout)
    ) -> types.CallToolResult:
        """Forward a call over the server's open session. The server's result comes back as
        it was sent (error results included); a server that is unknown, disabled, down,
        dies during the call or does not answer within ``timeout`` gives an error result
        saying so, and one that died is marked failed."""
        connection = self._connections.get(server)
        if connection is not None:
            return await connection.call_tool(tool, arguments, timeout=timeout)
        if not self.approved(server):
            return error_result(f"server '{server}' waits for the user's approval")
        if server in self._external or server in self._shipped:
            return error_result(f"server '{server}' is disabled")
        return error_result(f"unknown server '{server}'")

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
        """Stop the server if it runs and connect again, in the background (a disabled
        server is started). Its tools stay listed, unavailable, until it is back."""
        connection = self._connections.get(server)
        if connection is not None:
            await connection.reconnect()
            return
        config = self._external.get(server)
        if config is None:
            raise KeyError(f"unknown server '{server}'")
        if not self.approved(server):
            raise NotApprovedError(f"server '{server}' waits for your approval")
        self._connect(config)

    async def close(self) -> None:
        """Close every session and stop every server process."""
        self.schemas.close()
        await asyncio.gather(*(c.close() for c in self._connections.values()))

    async def __aenter__(self) -> Catalog:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _connect(self, spec: ServerSpec) -> None:
        connection = ServerConnection(
            spec,
            env=self.settings.env,
            project_dir=self.settings.project_dir,
            on_change=self._connection_changed,
        )
        self._connections[spec.name] = connection
        connection.start()

    def _connection_changed(self, connection: ServerConnection) -> None:
        name = connection.name
        if connection.status is not ServerStatus.CONNECTED:
            self.registry.set_status(name, connection.status, connection.error)
            return
        origin = self.registry.server(name).origin
        tools = [
            ToolInfo.from_mcp(
                name, tool.model_dump(mode="json", by_alias=True, exclude_none=True), origin
            )
            for tool in connection.tools
        ]
        # The index first, so whoever the registry notifies can already search the tools.
        self.index.update_server(name, tools)
        self.registry.set_tools(name, tools)
        self._check_schemas(name, tools)

    def _check_schemas(self, server: str, tools: list[ToolInfo]) -> None:
        """Compile the schemas in the background; the registry hears of invalid ones as
        soon as they are known (from an earlier connection at once, else when compiled)."""
        loop = asyncio.get_running_loop()

        def compiled() -> None:
            with contextlib.suppress(RuntimeError):  # the app closed its loop meanwhile
                loop.call_soon_threadsafe(self._note_schema_problems, server)

        self._note_schema_problems(server)
        self.schemas.compile_soon(tools, compiled)

    def _note_schema_problems(self, server: str) -> None:
        entry = self.registry.server(server)
        problems = {
            tool.name: compiled.problem
            for tool in entry.tools
            if (compiled := self.schemas.known(tool)) is not None and compiled.problem
        }
        self.registry.set_schema_problems(server, problems)
