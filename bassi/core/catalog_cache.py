"""The catalog as the last connection saw it, so ``bassi tools`` answers without starting
every server when nothing changed (starting them takes seconds; reading this, milliseconds).

One JSON file in the user's cache directory for the project (``Settings.project_cache_dir``),
never in the project, where a repository could ship one: per server, the fingerprint of the
configuration it was connected with, its status and error, and its tool definitions as the
server sent them. An entry is used only while its server's fingerprint is unchanged; the
catalog decides which servers may be used at all (never a disabled or unapproved one). The
file is only ever a cache: missing, corrupt or foreign, it reads as empty.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bassi.core.json_store import write_atomic
from bassi.core.registry import ServerEntry, ServerStatus
from bassi.core.tools import ToolInfo

log = logging.getLogger(__name__)

FORMAT = "bassi-catalog-1"
FILE_NAME = "tools-cache.json"


@dataclass(frozen=True, slots=True)
class CachedServer:
    fingerprint: str
    status: ServerStatus
    error: str | None
    tools: tuple[dict[str, Any], ...]
    """Definitions as ``ToolInfo.from_mcp`` reads them."""

    def tool_infos(self, server: str) -> list[ToolInfo]:
        return [ToolInfo.from_mcp(server, t) for t in self.tools]


def load(cache_dir: Path) -> dict[str, CachedServer]:
    try:
        data = json.loads((cache_dir / FILE_NAME).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return {}
        return {
            str(name): CachedServer(
                str(entry["fingerprint"]),
                ServerStatus(entry["status"]),
                entry.get("error"),
                tuple(t for t in entry["tools"] if isinstance(t, dict)),
            )
            for name, entry in data["servers"].items()
        }
    except FileNotFoundError:
        return {}
    except Exception as exc:
        log.warning("tool catalog cache unreadable (%s); connecting the servers", exc)
        return {}


def save(cache_dir: Path, servers: Mapping[str, tuple[str, ServerEntry]]) -> None:
    """Write (server -> (fingerprint, entry)) atomically."""
    data = {
        "format": FORMAT,
        "servers": {
            name: {
                "fingerprint": fingerprint,
                "status": entry.status.value,
                "error": entry.error,
                "tools": [_definition(t) for t in entry.tools],
            }
            for name, (fingerprint, entry) in servers.items()
        },
    }
    try:
        write_atomic(cache_dir / FILE_NAME, data)
    except OSError as exc:
        log.warning("could not write the tool catalog cache (%s)", exc)


def _definition(tool: ToolInfo) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
    }
    if tool.annotations:
        out["annotations"] = dict(tool.annotations)
    return out
