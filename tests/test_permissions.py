"""Permission rules behave like Claude Code's, from every place a user writes them."""

from __future__ import annotations

import json
from pathlib import Path

from bassi.core.permissions import PermissionRules, Rule, Verdict, denied_message, hidden_message
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


def test_deny_wins_over_allow_pins_and_allowed_servers(tmp_path: Path) -> None:
    rules = _rules(tmp_path, allow=("mcp__git",), deny=("mcp__git__git_commit",))
    decision = rules.decide(
        "mcp__git__git_commit", pinned={"mcp__git__git_commit"}, allowed_servers={"git"}
    )
    assert decision.verdict is Verdict.DENY
    assert "mcp__git__git_commit (bassi settings)" in decision.reason
    assert rules.decide("mcp__git__git_status").verdict is Verdict.ALLOW


def test_pins_and_allowed_servers_are_approved_and_the_rest_asks(tmp_path: Path) -> None:
    rules = _rules(tmp_path)
    assert rules.decide("mcp__git__git_status").verdict is Verdict.ASK
    pinned = rules.decide("mcp__git__git_status", pinned={"mcp__git__git_status"})
    assert pinned.verdict is Verdict.ALLOW
    by_server = rules.decide("mcp__git__git_log", allowed_servers={"git"})
    assert by_server.verdict is Verdict.ALLOW
    assert rules.decide("mcp__github__git_log", allowed_servers={"git"}).verdict is Verdict.ASK


def test_project_claude_settings_rules_apply(tmp_path: Path) -> None:
    _write(tmp_path, "settings.json", {"permissions": {"allow": ["mcp__time"], "deny": []}})
    _write(
        tmp_path,
        "settings.local.json",
        {"permissions": {"allow": ["mcp__memory__*"], "deny": ["mcp__time__convert_time"]}},
    )
    rules = _rules(tmp_path)
    assert rules.warnings == ()
    assert rules.decide("mcp__time__get_current_time").verdict is Verdict.ALLOW
    assert rules.decide("mcp__memory__read_graph").verdict is Verdict.ALLOW
    denied = rules.decide("mcp__time__convert_time")
    assert denied.verdict is Verdict.DENY
    assert ".claude/settings.local.json" in denied.reason


def test_broken_claude_settings_give_a_warning_and_the_other_rules_still_apply(
    tmp_path: Path,
) -> None:
    broken = _write(tmp_path, "settings.json", '{"permissions": {"deny": ["mcp__git"]\n  oops}')
    _write(tmp_path, "settings.local.json", {"permissions": {"allow": ["mcp__time"]}})
    rules = _rules(tmp_path, deny=("mcp__bash",))
    assert len(rules.warnings) == 1
    assert str(broken) in rules.warnings[0]
    assert "line 2, column 3" in rules.warnings[0]
    assert rules.decide("mcp__git__git_status").verdict is Verdict.ASK
    assert rules.decide("mcp__time__get_current_time").verdict is Verdict.ALLOW
    assert rules.decide("mcp__bash__execute").verdict is Verdict.DENY


def test_wrongly_shaped_permissions_are_reported_not_fatal(tmp_path: Path) -> None:
    _write(tmp_path, "settings.json", {"permissions": {"allow": "mcp__git", "deny": [1, "mcp__x"]}})
    _write(tmp_path, "settings.local.json", '["not", "an", "object"]')
    rules = _rules(tmp_path)
    assert any("'permissions.allow' is not a list" in w for w in rules.warnings)
    assert any("entries that are not rules" in w for w in rules.warnings)
    assert rules.decide("mcp__git__git_status").verdict is Verdict.ASK
    assert rules.decide("mcp__x__y").verdict is Verdict.DENY


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
    runtime = Runtime(Settings(project_dir=tmp_path, env={}), shipped={})
    assert any("settings.local.json: invalid JSON at line 1" in w for w in runtime.warnings)
