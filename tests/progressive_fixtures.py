"""Helpers for the progressive-disclosure tests: small registries built from plain data, and
a real runtime to hold a conversation with."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bassi.core.events import AgentEvent, TurnFinished
from bassi.core.registry import Registry, ServerStatus
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.core.tools import Origin, ToolInfo

LEDGER_SERVER = Path(__file__).parent / "servers" / "progressive_ledger.py"


def tool_def(name: str, description: str = "", **properties: str) -> dict[str, Any]:
    """An MCP tool in its JSON shape; each keyword is a string parameter with that text."""
    return {
        "name": name,
        "description": description or f"The {name.replace('_', ' ')} tool.",
        "inputSchema": {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in properties.items()},
        },
    }


def registry_of(
    servers: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    always_load: Sequence[str] = (),
    failed: Sequence[str] = (),
) -> Registry:
    registry = Registry()
    for server, tools in servers.items():
        registry.add_server(server, Origin.EXTERNAL, always_load=server in always_load)
        registry.set_tools(server, [ToolInfo.from_mcp(server, t) for t in tools])
    for server in failed:
        registry.set_status(server, ServerStatus.FAILED, "exited with code 1")
    return registry


def write_ledger_config(project: Path, ledger_file: Path) -> None:
    """The project's ``.mcp.json``: the ledger stdio server, tracing its calls in
    ``ledger_file``."""
    ledger = {
        "command": sys.executable,
        "args": [str(LEDGER_SERVER)],
        "env": {"LEDGER_FILE": str(ledger_file)},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"ledger": ledger}}))


@asynccontextmanager
async def running(settings: Settings, **changes: Any) -> AsyncIterator[Runtime]:
    """A started runtime whose servers have all connected (or failed)."""
    runtime = Runtime(replace(settings, **changes))
    try:
        await runtime.start()
        assert await runtime.catalog.wait_ready(30)
        yield runtime
    finally:
        await runtime.close()


async def turn(runtime: Runtime, message: str) -> list[AgentEvent]:
    """Every event of one turn, which must end normally."""
    events = [event async for event in runtime.send(message)]
    assert isinstance(events[-1], TurnFinished), events[-1]
    return events
