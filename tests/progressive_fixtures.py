"""Helpers for the progressive-disclosure tests: small registries built from plain data."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bassi.core.registry import Registry, ServerStatus
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
