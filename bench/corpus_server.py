"""Benchmark stand-ins for real servers: a factory for a server that announces given tool
definitions (``context_cost.py`` runs them in process), and, run as a script, such a server
over stdio for benchmarks that start real processes: ``python bench/corpus_server.py
TOOLS.json`` (a JSON list of tool definitions), and the environment and approval such a
benchmark project needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "corpus"
"""The shared corpus beside the checkout; a clone anywhere else has none, hence ``--corpus``."""


def corpus_servers(corpus: Path) -> list[dict[str, Any]]:
    """The corpus's server files (``server``, ``tools``), in name order. A corpus with no tools
    (a wrong ``--corpus``, or no ``../shared`` beside a clone) stops the benchmark with a
    message: measured, it would time an empty project, or replicate nothing forever."""
    servers = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(corpus.glob("*.json"))]
    if not any(server.get("tools") for server in servers):
        raise SystemExit(f"no tools in {corpus}/*.json (give --corpus)")
    return servers


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


def server_entry(tools: Path, **settings: Any) -> dict[str, Any]:
    """The ``.mcp.json`` entry that runs this script over stdio to serve the definitions in
    ``tools``, with this interpreter; ``settings`` adds to it (a ``timeout``, say)."""
    script = str(Path(__file__).resolve())
    return {"command": sys.executable, "args": [script, str(tools)], **settings}


def bench_env(scratch: Path) -> dict[str, str]:
    """This environment without an API key, with bassi's user directories (project
    approvals; the search index and catalog cache) inside ``scratch``, so a benchmark never
    touches the real ones and every run starts cold."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["BASSI_CONFIG_DIR"] = str(scratch / "bassi-config")
    env["BASSI_CACHE_DIR"] = str(scratch / "bassi-cache")
    return env


def approve_project(
    project: Path, env: Mapping[str, str], bassi: Sequence[str] = (sys.executable, "-m", "bassi")
) -> None:
    """Approve the project's servers as a person would once (``bassi mcp approve --all``,
    with the ``bassi`` being timed): a project's own ``.mcp.json`` starts nothing until
    then."""
    subprocess.run(
        [*bassi, "mcp", "approve", "--all"],
        cwd=project,
        env=dict(env),
        capture_output=True,
        check=True,
    )


def main() -> None:
    data = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    server = corpus_server("corpus", [types.Tool.model_validate(t) for t in data])(Path.cwd())

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
