"""Which tool calls run without asking, which never run, and which need the user's yes.

Rules use Claude Code's syntax so a Claude Code user's rules work unchanged:
``mcp__git`` (every tool of a server), ``mcp__git__*`` (the same, as a wildcard),
``mcp__git__git_status`` (one tool); ``*`` may stand for any run of characters. Rules for
Claude Code's own tools (``Bash(npm test)``, ``Read``) never match an MCP tool, so they are
ignored rather than refused. A deny rule wins over everything, including pins: the user who
wrote it meant "never".

Rules come from bassi's settings and from the ``permissions`` of the project's
``.claude/settings.json`` and ``.claude/settings.local.json``. A broken file costs its rules
and gives a warning; it never stops bassi.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from bassi.core.settings import Settings
from bassi.core.tools import QUALIFIED_PREFIX, SEPARATOR, split_qualified

CLAUDE_SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")
SEARCH_TOOL = "mcp__bassi__tool_search"
LOAD_TOOL = "mcp__bassi__tool_load"


class Verdict(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: str
    source: str
    """Where the rule was written, for messages: ``settings`` or a file path."""

    def matches(self, qualified: str) -> bool:
        parts = split_qualified(qualified)
        if parts is None or not self.pattern.startswith(QUALIFIED_PREFIX):
            return False
        body = self.pattern[len(QUALIFIED_PREFIX) :]
        if SEPARATOR not in body:
            return fnmatchcase(parts[0], body)
        return fnmatchcase(qualified, self.pattern)

    def __str__(self) -> str:
        return f"{self.pattern} ({self.source})"


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str


@dataclass(frozen=True)
class PermissionRules:
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    warnings: tuple[str, ...] = ()
    """Problems met while reading the rule files, for the UI to show once."""

    @classmethod
    def load(cls, settings: Settings) -> PermissionRules:
        allow = [Rule(p.strip(), "bassi settings") for p in settings.allow if p.strip()]
        deny = [Rule(p.strip(), "bassi settings") for p in settings.deny if p.strip()]
        warnings: list[str] = []
        for relative in CLAUDE_SETTINGS_FILES:
            path = settings.project_dir / relative
            file_allow, file_deny = _read_claude_rules(path, warnings)
            allow += [Rule(p, relative) for p in file_allow]
            deny += [Rule(p, relative) for p in file_deny]
        return cls(tuple(allow), tuple(deny), tuple(warnings))

    def denied_by(self, qualified: str) -> Rule | None:
        return _first_match(self.deny, qualified)

    def allowed_by(self, qualified: str) -> Rule | None:
        return _first_match(self.allow, qualified)

    def decide(
        self,
        qualified: str,
        *,
        pinned: Collection[str] = (),
        allowed_servers: Collection[str] = (),
    ) -> Decision:
        """Deny rules first, then what the user approved for good (pins, servers allowed
        "always", allow rules); anything else is for the caller to ask about."""
        if rule := self.denied_by(qualified):
            return Decision(Verdict.DENY, f"denied by the rule {rule}")
        if qualified in pinned:
            return Decision(Verdict.ALLOW, "pinned by the user")
        parts = split_qualified(qualified)
        if parts is not None and parts[0] in allowed_servers:
            return Decision(Verdict.ALLOW, f"the user allowed every tool of '{parts[0]}'")
        if rule := self.allowed_by(qualified):
            return Decision(Verdict.ALLOW, f"allowed by the rule {rule}")
        return Decision(Verdict.ASK, "not approved yet")


def _first_match(rules: Iterable[Rule], qualified: str) -> Rule | None:
    return next((r for r in rules if r.matches(qualified)), None)


def _read_claude_rules(path: Path, warnings: list[str]) -> tuple[list[str], list[str]]:
    """``permissions.allow`` and ``permissions.deny`` of one Claude Code settings file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: cannot be read ({exc}); its permission rules are ignored")
        return [], []
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}); "
            "its permission rules are ignored"
        )
        return [], []
    permissions = data.get("permissions") if isinstance(data, dict) else None
    if permissions is None:
        return [], []
    if not isinstance(permissions, dict):
        warnings.append(f"{path}: 'permissions' is not an object; its rules are ignored")
        return [], []
    return _rule_list(path, permissions, "allow", warnings), _rule_list(
        path, permissions, "deny", warnings
    )


def _rule_list(path: Path, permissions: dict[str, Any], key: str, warnings: list[str]) -> list[str]:
    value = permissions.get(key, [])
    if not isinstance(value, list):
        warnings.append(f"{path}: 'permissions.{key}' is not a list; ignored")
        return []
    rules = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    if len(rules) != len(value):
        warnings.append(f"{path}: 'permissions.{key}' has entries that are not rules; skipped")
    return rules


def hidden_message(name: str, closest: Iterable[str] = ()) -> str:
    """What the model reads when it calls a tool that is not loaded: how to get it."""
    hint = ", ".join(closest)
    maybe = f" Similar tools: {hint}." if hint else ""
    return (
        f"The tool {name} is not loaded, so it was not run.{maybe} Find tools with "
        f"{SEARCH_TOOL} (a short description of the task; it loads its top results) or load "
        f"exact names with {LOAD_TOOL}, then call the tool as mcp__<server>__<tool>."
    )


def denied_message(name: str, reason: str) -> str:
    """What the model reads when a rule forbids a tool: it must not try again."""
    return (
        f"The tool {name} is not allowed here ({reason}), so it was not run. Do not retry "
        f"it; find another way with {SEARCH_TOOL}, or ask the user."
    )


def unavailable_message(name: str, server: str, why: str) -> str:
    """What the model reads when the tool's server is down: not its fault, nothing to load."""
    return (
        f"The server '{server}' is not available ({why}), so {name} was not run. Tell the "
        "user; they can reconnect the server."
    )
