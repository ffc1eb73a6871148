"""MCP servers that ship with bassi. Each runs in process inside bassi and standalone over
stdio (``python -m mcp_servers.<name>``) for any other MCP client."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server


def _factory(module: str) -> Callable[[Path], Server[Any]]:
    """``mcp_servers.<module>.create_server``, imported when first called: naming the
    shipped servers (bassi's first screen, ``bassi tools`` answering from its cache) must
    not load them and the MCP server library."""

    def create(project_dir: Path) -> Server[Any]:
        server: Server[Any] = importlib.import_module(f"mcp_servers.{module}").create_server(
            project_dir
        )
        return server

    return create


SHIPPED_SERVERS: Mapping[str, Callable[[Path], Server[Any]]] = {
    "bash": _factory("bash"),
    "web": _factory("web"),
    "task_automation": _factory("task_automation"),
}
"""Server name -> factory taking the project directory (where commands and programs run) and
returning a fresh lowlevel ``mcp.server.Server``. The environment is read when the factory is
called, so limits and the search backend follow the variables set at that moment."""
