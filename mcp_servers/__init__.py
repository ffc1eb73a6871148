"""MCP servers that ship with bassi. Each runs in process inside bassi and standalone over
stdio (``python -m mcp_servers.<name>``) for any other MCP client."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server

    from mcp_servers._toolkit import ServerDefinition


@dataclass(frozen=True)
class ShippedServer:
    """``mcp_servers.<module>``, imported when first used: naming the shipped servers
    (bassi's first screen, ``bassi tools`` answering from its cache) must not load them.

    The environment is read when the server is defined, so limits and the search backend
    follow the variables set at that moment."""

    module: str

    def define(self, project_dir: Path, env: Mapping[str, str] | None = None) -> ServerDefinition:
        """The server's tools as Python objects: what bassi lists and calls in process.
        ``project_dir`` is where commands and programs run."""
        definition: ServerDefinition = importlib.import_module(
            f"mcp_servers.{self.module}"
        ).define_server(project_dir, env=env)
        return definition

    def __call__(self, project_dir: Path, env: Mapping[str, str] | None = None) -> Server[Any]:
        """The server as a lowlevel ``mcp.server.Server``, for an MCP client."""
        from mcp_servers._serving import build_server

        return build_server(self.define(project_dir, env))


SHIPPED_SERVERS: Mapping[str, ShippedServer] = {
    "bash": ShippedServer("bash"),
    "web": ShippedServer("web"),
    "task_automation": ShippedServer("task_automation"),
}
"""Server name -> the server bassi ships under that name."""
