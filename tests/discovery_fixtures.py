"""Helpers for the discovery, catalog and ``bassi tools`` tests: real stdio servers from
``tests/servers``, ``.mcp.json`` files in temporary projects, a real HTTP MCP server, and a
way to find every process a test started, orphans included."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn
from mcp import types
from mcp.server import Server, ServerRequestContext
from starlette.types import ASGIApp

from bassi.core.settings import Settings
from tests.conftest import HANG_SECONDS, approve_project

SERVERS = Path(__file__).parent / "servers"
MARKER_VARIABLE = "BASSI_TEST_MARKER"


def stdio_entry(script: str, *args: str, marker: str = "", **extra: Any) -> dict[str, Any]:
    """A ``.mcp.json`` entry running ``tests/servers/<script>`` with this Python. ``marker``
    goes into the server's environment so ``marked_processes`` can find it later."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVERS / script), *args]}
    if marker:
        entry["env"] = {MARKER_VARIABLE: marker}
    entry.update(extra)
    return entry


def new_marker() -> str:
    return uuid.uuid4().hex


def write_config(project: Path, servers: Mapping[str, Any]) -> Path:
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def project_settings(
    project: Path, servers: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> Settings:
    """Settings for ``project`` with ``servers`` as its servers file, approved."""
    write_config(project, servers)
    settings = Settings(project_dir=project, env=dict(os.environ if env is None else env))
    approve_project(settings)
    return settings


def marked_processes(marker: str) -> list[int]:
    """Every live process whose environment carries ``marker``, wherever it was reparented."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def program_of(pid: int) -> str:
    """What process ``pid`` runs (its ``argv[0]``), or "" once it is gone: a stdio server is
    first the shell that lowers its session, then the server it executes."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return ""


async def until(condition: Callable[[], bool], seconds: float = HANG_SECONDS) -> None:
    """Poll ``condition`` until it holds; fail the test if it never does (a hang)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {seconds} s")
        await asyncio.sleep(0.02)


def tool(name: str, description: str = "", **properties: str) -> types.Tool:
    return types.Tool(
        name=name,
        description=description or f"The {name} tool.",
        input_schema={
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in properties.items()},
        },
    )


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result, its text parts joined by newlines."""
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def lowlevel_server(name: str, tools: list[types.Tool]) -> Server[Any]:
    """An in-process MCP server whose ``tools`` list can be changed by the test; its
    ``announce`` tool tells the client the list changed. Calls echo the tool name and
    arguments."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(tools))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == "announce":
            await ctx.session.send_tool_list_changed()
        text = f"{name}/{params.name} {json.dumps(params.arguments or {}, sort_keys=True)}"
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


@asynccontextmanager
async def serving(app: ASGIApp) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 (a free port) inside this event loop; yields the base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        await until(lambda: server.started or task.done())
        if task.done():
            task.result()
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
