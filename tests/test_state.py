"""Per-project state survives restarts, grants nothing, two bassi instances in one project
lose nothing, and a damaged file or an unwritable directory never stops bassi."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.core.state import HISTORY_LIMIT, ProjectState
from bassi.core.tools import ToolInfo


def reloaded(state: ProjectState) -> ProjectState:
    """What the next bassi run in the project reads, once ``state``'s saves are written."""
    assert state.flush()
    return ProjectState.load(state.directory)


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
    assert reloaded(state).history == ["one", "two", "three"]

    for n in range(HISTORY_LIMIT + 5):
        state.add_history(f"line {n}")
    history = reloaded(state).history
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
    assert state.flush()
    assert json.loads((tmp_path / "history.json").read_text()) == ["hello"]


def test_unexpected_entries_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(json.dumps({"pins": ["mcp__a__b", 3, None]}))
    assert ProjectState.load(tmp_path).ignored_grants == ["mcp__a__b"]


def test_a_full_disk_keeps_the_history_in_memory_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = ProjectState.load(tmp_path)
    state.add_history("one")
    assert state.flush()
    heard: list[str] = []
    state.subscribe(heard.append)

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("bassi.core.json_store.os.fsync", full)
    state.add_history("two")
    assert state.flush()
    state.add_history("three")
    assert state.flush()

    # Said once; nothing after that tried (or warned) again.
    assert len(heard) == 1 and "the disk is full" in heard[0]
    assert state.warnings == heard
    assert state.history == ["one", "two", "three"]
    assert json.loads((tmp_path / "history.json").read_text()) == ["one"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".history.json.")]


def test_a_file_where_the_state_directory_should_be(tmp_path: Path) -> None:
    blocker = tmp_path / ".bassi"
    blocker.write_text("not a directory")
    state = ProjectState.load(blocker)
    assert state.warnings == []  # nothing to read is not a problem

    state.add_history("hello")
    assert state.flush()

    assert state.history == ["hello"]
    assert len(state.warnings) == 1
    assert "is not a directory" in state.warnings[0]
    assert "kept until bassi exits" in state.warnings[0]
    assert blocker.read_text() == "not a directory"


def test_two_instances_in_one_project_keep_each_others_history(tmp_path: Path) -> None:
    first = ProjectState.load(tmp_path)
    first.add_history("old")
    assert first.flush()

    first, second = ProjectState.load(tmp_path), ProjectState.load(tmp_path)
    first.add_history("from the first")
    assert first.flush()
    second.add_history("from the second")
    assert second.flush()
    first.add_history("first again")
    assert first.flush()

    after = ProjectState.load(tmp_path)
    assert after.history == ["old", "from the first", "from the second", "first again"]


def test_a_truncated_history_keeps_every_readable_entry(tmp_path: Path) -> None:
    (tmp_path / "history.json").write_text('[\n "one",\n "two",\n "thr', encoding="utf-8")
    state = ProjectState.load(tmp_path)
    assert state.history == ["one", "two"]
    assert len(state.warnings) == 1 and "2 readable entries kept" in state.warnings[0]
    # The kept entries are written back, so the next run has them without a warning.
    again = reloaded(state)
    assert again.history == ["one", "two"] and again.warnings == []


@pytest.mark.parametrize("name", ["state.json", "history.json"])
def test_deeply_nested_state_is_refused_with_the_file_named(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("[" * 1000 + "]" * 1000, encoding="utf-8")
    state = ProjectState.load(tmp_path)
    assert state.ignored_grants == [] and state.history == []
    assert len(state.warnings) == 1
    assert name in state.warnings[0] and "nested more than" in state.warnings[0]


async def test_two_runtimes_in_one_project_lose_nothing(tmp_path: Path) -> None:
    """What two bassi apps in one directory hold: each its own runtime over the same files
    (the history in the project, the pins in the user's directory)."""

    def runtime() -> Runtime:
        return Runtime(Settings(project_dir=tmp_path, env=dict(os.environ)), shipped={})

    first, second = runtime(), runtime()
    first.pin(ToolInfo("git", "git_status"))
    second.pin(ToolInfo("web", "fetch"))
    first.state.add_history("first's line")
    second.state.add_history("second's line")
    first.unpin(ToolInfo("git", "git_status"))
    first.pin(ToolInfo("git", "git_log"))
    await second.close()
    await first.close()

    third = runtime()
    # Each instance's entries in its own order; between instances, in the order written.
    assert sorted(third.grants.pins) == ["mcp__git__git_log", "mcp__web__fetch"]
    assert sorted(third.state.history) == ["first's line", "second's line"]
    await third.close()
