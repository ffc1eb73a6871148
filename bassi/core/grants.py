"""What the user allowed for good in one project: pinned tools and servers allowed "always".

Kept in the user's own bassi directory (``project_config_dir/grants.json``), never in the
project: a repository cannot ship a grant. Each grant remembers the definition it was given
for (digests of the tool's description, input schema and annotations), so when a server
later presents a different definition (a "rug pull") the grant no longer applies, and the
user is told which part changed.

A server allowed "always" covers the tools it had at that moment, each with its definition.
A tool it adds later, or one whose definition changes, asks again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bassi.core.settings import Settings
from bassi.core.tools import ToolInfo
from bassi.core.user_files import UserRecord

GRANTS_FILE = "grants.json"

_PARTS = ("description", "input schema", "annotations")


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _part_digests(tool: ToolInfo) -> dict[str, str]:
    values = (tool.description, dict(tool.input_schema), dict(tool.annotations or {}))
    return {part: _digest(value) for part, value in zip(_PARTS, values, strict=True)}


@dataclass(frozen=True, slots=True)
class Grant:
    """The definition a grant was given for."""

    definition: str
    """``ToolInfo.definition_hash`` at the time."""
    parts: Mapping[str, str]

    @classmethod
    def of(cls, tool: ToolInfo) -> Grant:
        return cls(tool.definition_hash, _part_digests(tool))

    def covers(self, tool: ToolInfo) -> bool:
        return tool.definition_hash == self.definition

    def changes(self, tool: ToolInfo) -> tuple[str, ...]:
        """The parts of ``tool`` that differ from the granted definition (empty if none)."""
        if self.covers(tool):
            return ()
        now = _part_digests(tool)
        changed = tuple(p for p in _PARTS if self.parts.get(p) != now[p])
        return changed or ("definition",)

    def to_json(self) -> dict[str, Any]:
        return {"definition": self.definition, "parts": dict(self.parts)}

    @classmethod
    def from_json(cls, value: object) -> Grant | None:
        if not isinstance(value, dict) or not isinstance(value.get("definition"), str):
            return None
        parts = value.get("parts")
        if not isinstance(parts, dict):
            parts = {}
        return cls(value["definition"], {k: v for k, v in parts.items() if isinstance(v, str)})


class Grants:
    """Read once when bassi starts; every change is written at once."""

    def __init__(
        self,
        record: UserRecord,
        *,
        pins: dict[str, Grant] | None = None,
        servers: dict[str, dict[str, Grant]] | None = None,
        notices: dict[str, str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self._record = record
        self._pins = pins or {}
        self._servers = servers or {}
        self._notices = notices or {}
        self.warnings = warnings or []
        """Problems met while loading, for the UI to show once."""

    @classmethod
    def load(cls, settings: Settings) -> Grants:
        record = UserRecord(settings.project_config_dir / GRANTS_FILE)
        warnings: list[str] = []
        data = record.load(warnings)
        pins = _grant_map(data.get("pins"))
        servers_data = data.get("servers")
        servers = (
            {s: _grant_map(tools) for s, tools in servers_data.items() if isinstance(s, str)}
            if isinstance(servers_data, dict)
            else {}
        )
        notices_data = data.get("notices")
        notices = (
            {k: v for k, v in notices_data.items() if isinstance(v, str)}
            if isinstance(notices_data, dict)
            else {}
        )
        return cls(record, pins=pins, servers=servers, notices=notices, warnings=warnings)

    # Pins

    @property
    def pins(self) -> list[str]:
        """Qualified names of the pinned tools, in pin order."""
        return list(self._pins)

    def pin_of(self, qualified: str) -> Grant | None:
        return self._pins.get(qualified)

    def pin(self, tool: ToolInfo) -> bool:
        """Pin ``tool`` as it is defined now (a pin made again takes the new definition).
        Returns False when it was pinned already with this very definition."""
        grant = Grant.of(tool)
        if self._pins.get(tool.qualified_name) == grant:
            return False
        self._pins[tool.qualified_name] = grant
        self._save()
        return True

    def unpin(self, qualified: str) -> bool:
        """Returns False when it was not pinned."""
        if self._pins.pop(qualified, None) is None:
            return False
        self._save()
        return True

    # Servers allowed "always"

    @property
    def servers(self) -> list[str]:
        return list(self._servers)

    def server_grant(self, server: str) -> Mapping[str, Grant] | None:
        """The tools (by name) a server had when the user allowed it, or None."""
        return self._servers.get(server)

    def allow_server(self, server: str, tools: Iterable[ToolInfo]) -> None:
        """Allow every tool ``server`` has now, as each is defined now."""
        self._servers[server] = {t.name: Grant.of(t) for t in tools if t.server == server}
        self._save()

    # Notices shown once

    def noticed(self, key: str, digest: str) -> bool:
        """Whether the notice ``key`` was shown for this ``digest``; records it if not."""
        if self._notices.get(key) == digest:
            return True
        self._notices[key] = digest
        self._save()
        return False

    def _save(self) -> None:
        self._record.save(
            {
                "pins": {q: g.to_json() for q, g in self._pins.items()},
                "servers": {
                    s: {t: g.to_json() for t, g in tools.items()}
                    for s, tools in self._servers.items()
                },
                "notices": self._notices,
            }
        )


def _grant_map(value: object) -> dict[str, Grant]:
    if not isinstance(value, dict):
        return {}
    grants = {}
    for name, raw in value.items():
        grant = Grant.from_json(raw)
        if isinstance(name, str) and grant is not None:
            grants[name] = grant
    return grants
