"""Shipped servers as MCP servers: a ``ServerDefinition`` turned into a lowlevel
``mcp.server.Server``, and served over stdio.

bassi itself calls its shipped servers directly (``bassi.core.in_process``); this is how every
other MCP client reaches them (``python -m mcp_servers.<name>``), and how tests speak to them
over mcp's in-memory transport, exactly as a client would.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from bassi import __version__
from mcp_servers._toolkit import ServerDefinition, ToolOutput


def call_result(output: ToolOutput) -> types.CallToolResult:
    """A shipped tool's answer as MCP's ``tools/call`` result."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=output.text)], is_error=output.is_error
    )


def build_server(definition: ServerDefinition) -> Server[Any]:
    listing = types.ListToolsResult(
        tools=[types.Tool.model_validate(tool.definition()) for tool in definition.tools]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return call_result(await definition.call(params.name, params.arguments or {}))

    return Server(
        definition.name,
        version=__version__,
        instructions=definition.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(define: Callable[[Path], ServerDefinition]) -> None:
    """The body of each ``python -m mcp_servers.<name>``: serve a fresh server on stdin/stdout
    until the client closes the connection. The project directory is the first argument, or
    the working directory the client started the server in."""
    project_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    if not project_dir.is_dir():
        sys.exit(f"{sys.argv[0]}: project directory {project_dir} does not exist")
    server = build_server(define(project_dir))

    async def serve() -> None:
        stopped_by: list[int] = []
        async with stdio_server() as (read_stream, write_stream):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_stop_on_signal, tasks.cancel_scope, stopped_by)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tasks.cancel_scope.cancel()
            if stopped_by:
                # Running tools were cancelled and have killed what they started. Leaving
                # stdio_server() would now wait for its stdin reader thread, which only a
                # client that closes the pipe can release: exit at once instead.
                sys.stderr.flush()
                os._exit(128 + stopped_by[0])

    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    anyio.run(serve)


async def _stop_on_signal(scope: anyio.CancelScope, stopped_by: list[int]) -> None:
    """Turn SIGTERM, SIGINT and SIGHUP into cancellation, so running tools get to clean up
    (kill the process groups they started) instead of the server dying around them."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            stopped_by.append(signum)
            scope.cancel()
            return
