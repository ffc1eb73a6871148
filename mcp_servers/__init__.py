"""MCP servers that ship with bassi. Each runs in process inside bassi and standalone over
stdio (``python -m mcp_servers.<name>``) for any other MCP client."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp.server import Server

from mcp_servers import bash, task_automation, web

SHIPPED_SERVERS: Mapping[str, Callable[[Path], Server[Any]]] = {
    "bash": bash.create_server,
    "web": web.create_server,
    "task_automation": task_automation.create_server,
}
"""Server name -> factory taking the project directory (where commands and programs run) and
returning a fresh lowlevel ``mcp.server.Server``. The environment is read when the factory is
called, so limits and the search backend follow the variables set at that moment."""
