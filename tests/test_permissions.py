"""Permission rules behave like Claude Code's, from every place a user writes them, and a
rules file that cannot be read is reported with where and why (the policy then fails closed,
see test_policy)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bassi.core.permissions import (
    SETTINGS_SOURCE,
    PermissionRules,
    Rule,
    denied_message,
    hidden_message,
)
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings


def _rules(tmp_path: Path, **kwargs: tuple[str, ...]) -> PermissionRules:
    return PermissionRules.load(Settings(project_dir=tmp_path, env={}, **kwargs))  # type: ignore[arg-type]


def _write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_rule_forms_match_like_claude_code() -> None:
    server = Rule("mcp__git", "test")
    wildcard = Rule("mcp__git__*", "test")
    exact = Rule("mcp__git__git_status", "test")
    prefix = Rule("mcp__github__get_*", "test")
    for rule in (server, wildcard):
        assert rule.matches("mcp__git__git_status")
        assert rule.matches("mcp__git__git_commit")
        assert not rule.matches("mcp__github__get_issue")
    assert exact.matches("mcp__git__git_status")
    assert not exact.matches("mcp__git__git_status_all")
    assert prefix.matches("mcp__github__get_issue")
    assert not prefix.matches("mcp__github__create_issue")


def test_rules_for_claude_codes_own_tools_never_match_an_mcp_tool() -> None:
    for pattern in ("Bash", "Bash(git status)", "Read(./.env)", "*"):
        assert not Rule(pattern, "test").matches("mcp__bash__execute")


def test_a_rule_matches_any_of_a_tools_names() -> None:
    rules = _rules(Path("."), deny=("mcp__srv__rm_all",))
    assert str(rules.denied_by(["mcp__srv__rm.all", "mcp__srv__rm_all"])) == (
        f"mcp__srv__rm_all ({SETTINGS_SOURCE})"
    )
    assert rules.denied_by(["mcp__srv__rm.all"]) is None


def test_project_claude_settings_rules_are_read_with_their_source(tmp_path: Path) -> None:
    _write(tmp_path, "settings.json", {"permissions": {"allow": ["mcp__time"], "deny": []}})
    _write(
        tmp_path,
        "settings.local.json",
        {"permissions": {"allow": ["mcp__memory__*"], "deny": ["mcp__time__convert_time"]}},
    )
    rules = _rules(tmp_path, allow=("mcp__git",))
    assert rules.broken == () and rules.warnings == ()
    own, shared, local = rules.sources
    assert (own.name, own.from_project, own.allow_patterns) == (
        SETTINGS_SOURCE,
        False,
        ("mcp__git",),
    )
    assert (shared.name, shared.from_project) == (".claude/settings.json", True)
    assert shared.allow_patterns == ("mcp__time",)
    assert local.allow_patterns == ("mcp__memory__*",)
    denied = rules.denied_by(["mcp__time__convert_time"])
    assert str(denied) == "mcp__time__convert_time (.claude/settings.local.json)"
    assert rules.allowed_by(["mcp__time__get_current_time"], shared) is not None
    assert rules.allowed_by(["mcp__time__get_current_time"], local) is None


def test_a_broken_settings_file_is_reported_with_where_and_why(tmp_path: Path) -> None:
    broken = _write(tmp_path, "settings.json", '{"permissions": {"deny": ["mcp__git"]\n  oops}')
    _write(tmp_path, "settings.local.json", {"permissions": {"allow": ["mcp__time"]}})
    rules = _rules(tmp_path, deny=("mcp__bash",))
    (problem,) = rules.broken
    assert str(broken) in problem
    assert "line 2, column 3" in problem
    assert "every tool call asks first" in rules.warnings[0]
    assert rules.denied_by(["mcp__bash__execute"]) is not None
    assert rules.sources[-1].allow_patterns == ("mcp__time",)


def test_wrongly_shaped_permissions_are_broken_and_keep_what_only_restricts(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "settings.json", {"permissions": {"allow": "mcp__git", "deny": [1, "mcp__x"]}})
    _write(tmp_path, "settings.local.json", '["not", "an", "object"]')
    rules = _rules(tmp_path)
    shaped, listed = rules.broken
    assert "'permissions.allow' is not a list" in shaped
    assert "'permissions.deny' has entries that are not rules" in shaped
    assert "not a JSON object" in listed
    assert rules.denied_by(["mcp__x__y"]) is not None


def test_deeply_nested_or_nan_settings_are_reported_not_a_crash(tmp_path: Path) -> None:
    deep = _write(tmp_path, "settings.json", '{"permissions": ' + "[" * 1000 + "]" * 1000 + "}")
    nan = _write(tmp_path, "settings.local.json", '{"permissions": {"allow": [NaN]}}')
    rules = _rules(tmp_path, deny=("mcp__bash",))
    assert len(rules.broken) == 2
    assert rules.broken[0].startswith(f"{deep}: nested more than")
    assert rules.broken[1].startswith(f'{nan}: "permissions.allow[0]" is NaN')
    assert rules.denied_by(["mcp__bash__execute"]) is not None


def test_messages_tell_the_model_how_to_find_and_load_tools() -> None:
    hidden = hidden_message("mcp__git__git_status", ["git/git_log"])
    assert "mcp__bassi__tool_search" in hidden
    assert "mcp__bassi__tool_load" in hidden
    assert "git/git_log" in hidden
    denied = denied_message("mcp__git__git_commit", "denied by the rule mcp__git (settings)")
    assert "Do not retry" in denied
    assert "mcp__git (settings)" in denied


def test_the_runtime_reports_broken_rule_files_among_its_warnings(tmp_path: Path) -> None:
    _write(tmp_path, "settings.local.json", "{nope")
    runtime = Runtime(Settings(project_dir=tmp_path, env=dict(os.environ)), shipped={})
    assert any("settings.local.json: invalid JSON at line 1" in w for w in runtime.warnings)
