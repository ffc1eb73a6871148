"""Fixtures for pilot tests of the whole app: a project with real servers, and the app over a
real ``Runtime`` (real catalog, index, state; the real CLI when a test chats)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.server import Server, ServerRequestContext

from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.ui.app import BassiApp
from tests.conftest import TEST_MODEL, approve_project, make_agent_env

SERVERS = Path(__file__).parent / "servers"

SCRATCH_TOOLS = [
    types.Tool(
        name="scratch_write",
        description="Write text to the scratch pad.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to write."}},
            "required": ["text"],
        },
    ),
    types.Tool(
        name="scratch_read",
        description="Read the scratch pad back.",
        input_schema={"type": "object", "properties": {}},
    ),
]


def scratch_server(_project: Path) -> Server[Any]:
    """bassi's "own" server in these tests: in process, two tools, deterministic."""

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=SCRATCH_TOOLS)

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text = json.dumps(params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("scratch", on_list_tools=list_tools, on_call_tool=call_tool)


def notes_entry(*args: str) -> dict[str, Any]:
    """Started as ``python notes_server.py`` from the servers directory, so what the catalog
    shows as its command is the same on every machine (the env's PATH finds this Python)."""
    return {"command": "python", "args": ["notes_server.py", *args], "cwd": str(SERVERS)}


def write_servers(project: Path, servers: Mapping[str, Any]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose ``.mcp.json`` has the notes server and one whose command is missing."""
    path = tmp_path / "project"
    path.mkdir()
    write_servers(
        path,
        {
            "notes": notes_entry(),
            "broken": {"command": "bassi-test-no-such-command", "args": ["--serve"]},
        },
    )
    return path


def python_first(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with this interpreter's directory first on PATH (servers run as ``python``)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, "PATH": path}


@pytest.fixture
def offline_env(tmp_path: Path) -> dict[str, str]:
    """An environment with no API key and no model endpoint."""
    return python_first(make_agent_env(tmp_path / "home", None, api_key=None))


AppFactory = Callable[..., BassiApp]


@pytest.fixture
def make_app(project: Path, offline_env: dict[str, str]) -> AppFactory:
    """``make_app(**settings)``: a fresh app over a fresh runtime for ``project`` (call it
    again for an "app restart": the state on disk is all that carries over). Without an
    ``env`` override there is no API key. The project's servers are approved first, unless
    ``approved=False``; bassi's own servers are the scratch pad unless ``shipped`` says."""

    def make(
        *, approved: bool = True, shipped: Mapping[str, Any] | None = None, **overrides: Any
    ) -> BassiApp:
        values: dict[str, Any] = {
            "project_dir": project,
            "model": TEST_MODEL,
            "env": offline_env,
        } | overrides
        settings = Settings(**values)
        if approved:
            approve_project(settings)
        own = shipped if shipped is not None else {"scratch": scratch_server}
        return BassiApp(Runtime(settings, shipped=own))

    return make
