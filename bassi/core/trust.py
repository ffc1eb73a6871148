"""Project trust: a directory's own ``.mcp.json`` and permission rules do nothing until the
user approves them.

A cloned repository can ship a ``.mcp.json`` whose "server" is any command, and a
``.claude/settings.json`` whose allow rules let tools run without asking. So the first time
bassi meets such a server or such rules it starts none of them and honours none of them:
the servers are registered as pending and the rules are set aside, until the user approves
them in the app or with ``bassi mcp approve``.

What was approved is remembered in the user's own directory (``project_config_dir/
trust.json``), per server as a fingerprint of everything that decides what runs (its type,
command, arguments, URL, headers, environment and working directory, as expanded), and per
settings file as a digest of its allow rules. Changing any of them makes it pending again.
Deny rules are always honoured: they only take away.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bassi.core.mcp_config import HttpServerConfig, ServerConfig
from bassi.core.settings import Settings
from bassi.core.user_files import UserRecord

TRUST_FILE = "trust.json"


class Standing(StrEnum):
    APPROVED = "approved"
    NEW = "new"
    """Never approved."""
    CHANGED = "changed"
    """Approved once, in another form."""


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def server_fingerprint(config: ServerConfig) -> str:
    """Everything about a server entry that decides what runs, and nothing else (a timeout
    or ``alwaysLoad`` change needs no new approval)."""
    if isinstance(config, HttpServerConfig):
        return _digest({"type": config.type, "url": config.url, "headers": dict(config.headers)})
    return _digest(
        {
            "type": config.type,
            "command": config.command,
            "args": list(config.args),
            "env": dict(config.env),
            "cwd": str(config.cwd) if config.cwd else None,
        }
    )


def rules_digest(allow: Sequence[str]) -> str:
    """A digest of the allow rules of one settings file: what approving it grants."""
    return _digest(list(allow))


@dataclass(frozen=True, slots=True)
class PendingServer:
    name: str
    target: str
    """The command line or URL, for the person deciding."""
    standing: Standing
    details: tuple[str, ...] = ()
    """Everything else of the entry that decides what runs (environment, working directory,
    headers), one line each: the person approves all of it."""


class ProjectTrust:
    """The approvals of one project. Read once; every approval is written at once."""

    def __init__(
        self,
        record: UserRecord,
        *,
        servers: dict[str, str] | None = None,
        rules: dict[str, str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self._record = record
        self._servers = servers or {}
        self._rules = rules or {}
        self.warnings = warnings or []

    @classmethod
    def load(cls, settings: Settings) -> ProjectTrust:
        record = UserRecord(settings.project_config_dir / TRUST_FILE)
        warnings: list[str] = []
        data = record.load(warnings)
        return cls(
            record,
            servers=_strings(data.get("servers")),
            rules=_strings(data.get("rules")),
            warnings=warnings,
        )

    def server_standing(self, name: str, config: ServerConfig) -> Standing:
        return _standing(self._servers.get(name), server_fingerprint(config))

    def approve_server(self, name: str, config: ServerConfig) -> None:
        self._servers[name] = server_fingerprint(config)
        self._save()

    def rules_standing(self, source: str, allow: Sequence[str]) -> Standing:
        if not allow:
            return Standing.APPROVED
        return _standing(self._rules.get(source), rules_digest(allow))

    def approve_rules(self, source: str, allow: Sequence[str]) -> None:
        self._rules[source] = rules_digest(allow)
        self._save()

    def _save(self) -> None:
        self._record.save({"servers": self._servers, "rules": self._rules})


def _standing(approved: str | None, now: str) -> Standing:
    if approved is None:
        return Standing.NEW
    return Standing.APPROVED if approved == now else Standing.CHANGED


def _strings(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
