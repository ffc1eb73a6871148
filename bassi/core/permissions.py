"""Permission rules: which tools the user's rules allow without asking, and which never run.

Rules use Claude Code's syntax so a Claude Code user's rules work unchanged:
``mcp__git`` (every tool of a server), ``mcp__git__*`` (the same, as a wildcard),
``mcp__git__git_status`` (one tool); ``*`` may stand for any run of characters. A rule is
matched against the name the model calls the tool by and against the tool's own name, so
``mcp__srv__rm_all`` and ``mcp__srv__rm.all`` both name the tool ``rm.all``. Rules for Claude
Code's own tools (``Bash(npm test)``, ``Read``) never match an MCP tool, so they are ignored
rather than refused.

Rules come from bassi's settings (the user's own environment) and from the ``permissions`` of
the project's ``.claude/settings.json`` and ``.claude/settings.local.json``. A project file's
allow rules count only once the user approved them (see ``bassi.core.trust``); its deny rules
always count. A file that cannot be read or understood fails closed: it is reported, with
where and why, and while it is broken every call asks (``PermissionRules.broken``).

How the rules combine with pins, server grants and visibility is ``bassi.core.policy``'s job.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from bassi.core.json_store import JsonFileError, loads, read_text
from bassi.core.settings import Settings
from bassi.core.tools import QUALIFIED_PREFIX, SEPARATOR, split_qualified

CLAUDE_SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json")
SETTINGS_SOURCE = "bassi settings"
SEARCH_TOOL = "mcp__bassi__tool_search"
LOAD_TOOL = "mcp__bassi__tool_load"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: str
    source: str
    """Where the rule was written, for messages: ``bassi settings`` or a project file."""

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
class RulesSource:
    """The rules of one place."""

    name: str
    """``bassi settings`` or the file's path relative to the project."""
    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    problem: str | None = None
    """Why the source could not be read whole; None when it was."""
    from_project: bool = False
    """Its allow rules need the user's approval of the project."""

    @property
    def allow_patterns(self) -> tuple[str, ...]:
        return tuple(r.pattern for r in self.allow)


@dataclass(frozen=True)
class PermissionRules:
    sources: tuple[RulesSource, ...] = ()

    @classmethod
    def load(cls, settings: Settings) -> PermissionRules:
        own = RulesSource(
            SETTINGS_SOURCE,
            allow=_rules(settings.allow, SETTINGS_SOURCE),
            deny=_rules(settings.deny, SETTINGS_SOURCE),
        )
        files = [_read_claude_rules(settings.project_dir, r) for r in CLAUDE_SETTINGS_FILES]
        return cls((own, *(f for f in files if f is not None)))

    @property
    def broken(self) -> tuple[str, ...]:
        """What is wrong with each source that could not be read whole. While any is, no
        call runs without asking: its allow rules may be missing, or its deny rules."""
        return tuple(s.problem for s in self.sources if s.problem)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(f"{p}; until it is fixed every tool call asks first" for p in self.broken)

    def denied_by(self, names: Iterable[str]) -> Rule | None:
        """The first deny rule matching any of ``names`` (the names of one tool)."""
        return _first_match((r for s in self.sources for r in s.deny), names)

    def allowed_by(self, names: Iterable[str], source: RulesSource) -> Rule | None:
        return _first_match(source.allow, names)


def _rules(patterns: Iterable[str], source: str) -> tuple[Rule, ...]:
    return tuple(Rule(p.strip(), source) for p in patterns if p.strip())


def _first_match(rules: Iterable[Rule], names: Iterable[str]) -> Rule | None:
    names = list(names)
    return next((r for r in rules if any(r.matches(n) for n in names)), None)


def _read_claude_rules(project: Path, relative: str) -> RulesSource | None:
    """``permissions.allow`` and ``permissions.deny`` of one Claude Code settings file; None
    when the file does not exist."""
    path = project / relative
    try:
        data: Any = loads(read_text(path), path)
    except FileNotFoundError:
        return None
    except JsonFileError as exc:  # invalid, too deep, NaN, a FIFO or device
        return RulesSource(relative, problem=f"{path}: {exc.reason}", from_project=True)
    except OSError as exc:
        return RulesSource(relative, problem=f"{path}: cannot be read ({exc})", from_project=True)
    if not isinstance(data, dict):
        return RulesSource(relative, problem=f"{path}: not a JSON object", from_project=True)
    permissions = data.get("permissions")
    if permissions is None:
        return RulesSource(relative, from_project=True)
    if not isinstance(permissions, dict):
        problem = f"{path}: 'permissions' is not an object"
        return RulesSource(relative, problem=problem, from_project=True)
    problems: list[str] = []
    allow = _rule_list(permissions, "allow", problems)
    deny = _rule_list(permissions, "deny", problems)
    return RulesSource(
        relative,
        allow=tuple(Rule(p, relative) for p in allow),
        deny=tuple(Rule(p, relative) for p in deny),
        problem=f"{path}: " + "; ".join(problems) if problems else None,
        from_project=True,
    )


def _rule_list(permissions: dict[str, Any], key: str, problems: list[str]) -> list[str]:
    value = permissions.get(key, [])
    if not isinstance(value, list):
        problems.append(f"'permissions.{key}' is not a list")
        return []
    rules = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    if len(rules) != len(value):
        problems.append(f"'permissions.{key}' has entries that are not rules")
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


def pending_message(name: str, server: str) -> str:
    """What the model reads when the tool's server waits for the user's approval."""
    return (
        f"The server '{server}' has not been approved by the user yet, so {name} was not run. "
        f"Tell the user; they can approve it in bassi or with `bassi mcp approve {server}`."
    )


def unusable_message(name: str, why: str) -> str:
    """What the model reads when a tool's name cannot name exactly one tool."""
    return (
        f"The tool {name} cannot be called: {why}. No tool was run. Tell the user; the "
        "server's author has to rename the tools."
    )


def unavailable_message(name: str, server: str, why: str) -> str:
    """What the model reads when the tool's server is down: not its fault, nothing to load."""
    return (
        f"The server '{server}' is not available ({why}), so {name} was not run. Tell the "
        "user; they can reconnect the server."
    )
