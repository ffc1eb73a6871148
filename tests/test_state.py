"""Per-project state survives restarts, grants nothing, and a damaged file never stops
bassi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bassi.core.state import HISTORY_LIMIT, ProjectState


def test_grants_in_a_projects_state_file_are_only_reported(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(
        json.dumps({"pins": ["mcp__bash__execute"], "allowed_servers": ["web"]})
    )
    state = ProjectState.load(tmp_path)
    assert state.ignored_grants == ["mcp__bash__execute", "every tool of 'web'"]
    assert not hasattr(state, "pins")


def test_history_keeps_order_skips_repeats_and_is_capped(tmp_path: Path) -> None:
    state = ProjectState.load(tmp_path)
    for line in ["one", "two", "two", "  ", "three"]:
        state.add_history(line)
    assert ProjectState.load(tmp_path).history == ["one", "two", "three"]

    for n in range(HISTORY_LIMIT + 5):
        state.add_history(f"line {n}")
    history = ProjectState.load(tmp_path).history
    assert len(history) == HISTORY_LIMIT
    assert history[-1] == f"line {HISTORY_LIMIT + 4}"


def test_corrupt_state_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text('{"pins": ["mcp__a__b"', encoding="utf-8")
    (tmp_path / "history.json").write_text('{"not": "a list"}', encoding="utf-8")

    state = ProjectState.load(tmp_path)

    assert state.ignored_grants == [] and state.history == []
    assert len(state.warnings) == 2
    assert "state.json" in state.warnings[0] and "moved to state.json.corrupt-" in state.warnings[0]
    aside = sorted(p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name)
    assert len(aside) == 2
    # The damaged content is kept for the user, and the next save writes a good file.
    state.add_history("hello")
    assert json.loads((tmp_path / "history.json").read_text()) == ["hello"]


def test_unexpected_entries_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(json.dumps({"pins": ["mcp__a__b", 3, None]}))
    assert ProjectState.load(tmp_path).ignored_grants == ["mcp__a__b"]


def test_a_failed_write_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = ProjectState.load(tmp_path)
    state.add_history("one")

    def boom(*_args: object, **_kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("bassi.core.state.os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        state.add_history("two")
    assert json.loads((tmp_path / "history.json").read_text()) == ["one"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".history.json.")]
