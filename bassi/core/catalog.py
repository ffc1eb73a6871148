"""The catalog: every server bassi knows, connected once, with one registry and one index.

This is the facade the app, the agent bridge and ``bassi tools`` share. Starting it registers
every server at once (so the UI can show them all while they connect) and connects them
concurrently in the background; a slow or broken server delays only itself. The registry
and the search index follow each server as it connects, fails, or is reconnected, and each
connected server's tool schemas are compiled in the background for checking calls (see
``bassi.core.validation``), the invalid ones noted in the registry.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
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
from bassi.core.validation import SchemaChecks

ShippedFactory = Callable[[Path], Any]
"""Project directory -> a fresh ``mcp.server.Server`` (or ``MCPServer``) to run in process."""


class Catalog:
    def __init__(
        self,
        settings: Settings,
        *,
        shipped: Mapping[str, ShippedFactory] | None = None,
        index: ToolIndex | None = None,
    ) -> None:
        if shipped is None:
            from mcp_servers import SHIPPED_SERVERS

            shipped = SHIPPED_SERVERS
        self.settings = settings
        self.registry = Registry()
        self.index = index if index is not None else ToolIndex(settings.state_dir / "index")
        self.schemas = SchemaChecks()
        config = load_mcp_config(
            settings.mcp_config_path,
            settings.env,
            project_dir=settings.project_dir,
            required=settings.mcp_config is not None,
        )
        self.problems: list[ConfigProblem] = list(config.problems)
        """Problems in the servers file, for display; the servers they name were skipped
        (errors) or loaded anyway (warnings)."""
        self._shipped = dict(shipped)
        self._external: dict[str, ServerConfig] = {}
        for name, server in config.servers.items():
            if name in self._shipped:
                self.problems.append(
                    ConfigProblem(
                        settings.mcp_config_path,
                        "this name belongs to a server bassi ships; rename the entry",
                        name,
                    )
                )
            else:
                self._external[name] = server
                mask_in_log(server.expanded)
        self._connections: dict[str, ServerConnection] = {}
        self._started = False

    def config_for(self, server: str) -> ServerConfig | None:
        """The ``.mcp.json`` entry of an external server (None for bassi's own)."""
        return self._external.get(server)

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
            self.registry.add_server(
                name,
                Origin.EXTERNAL,
                target=config.display_target,
                always_load=config.always_load,
                status=ServerStatus.DISABLED if config.disabled else ServerStatus.CONNECTING,
            )
            if not config.disabled:
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
