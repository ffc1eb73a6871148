"""Benchmark stand-ins for real servers: a factory for a server that announces given tool
definitions (``context_cost.py`` runs them in process), and, run as a script, such a server
over stdio for benchmarks that start real processes: ``python bench/corpus_server.py
TOOLS.json`` (a JSON list of tool definitions)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def corpus_server(name: str, tools: list[types.Tool]) -> Callable[[Path], Server[Any]]:
    """A factory for an in-process server that announces the corpus tools; calling one
    only says it is a benchmark stand-in (the bench never calls tools)."""

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text = f"{name}/{params.name} is a benchmark corpus definition; it does not run"
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

    return lambda _project_dir: Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    data = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    server = corpus_server("corpus", [types.Tool.model_validate(t) for t in data])(Path.cwd())

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
