"""``bassi tools list|search|show`` run as a real command in a temporary project, against
real stdio servers: output, JSON, exit codes, safety of hostile text, no leftover process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bassi.core.settings import Settings
from tests.conftest import approve_project
from tests.discovery_fixtures import marked_processes, new_marker, stdio_entry, write_config

MARKER = new_marker()


def run_bassi(
    project: Path, *args: str, env: dict[str, str] | None = None, approved: bool = True
) -> subprocess.CompletedProcess[str]:
    """``bassi ARGS`` in ``project``, whose servers file (or ``--mcp-config``) is approved
    first unless ``approved=False``."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    if approved:
        config = Path(args[args.index("--mcp-config") + 1]) if "--mcp-config" in args else None
        approve_project(Settings(project_dir=project, mcp_config=config, env=env))
    result = subprocess.run(
        [sys.executable, "-m", "bassi", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert marked_processes(MARKER) == []
    return result


WORKING = {
    "good": stdio_entry("good_server.py", marker=MARKER),
    "paged": stdio_entry("paged_server.py", marker=MARKER),
    "crashy": stdio_entry("crash_server.py", marker=MARKER),  # has an ``echo`` too
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three working servers."""
    root = tmp_path_factory.mktemp("project")
    write_config(root, WORKING)
    return root


@pytest.fixture(scope="module")
def troubled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working servers, one that exits at once, one disabled and three broken entries."""
    root = tmp_path_factory.mktemp("troubled")
    write_config(
        root,
        {
            **WORKING,
            "gone": stdio_entry("exit_server.py", marker=MARKER),
            "off": stdio_entry("good_server.py", marker=MARKER, disabled=True),
            "bad name": {"command": "x"},
            "weird": {"type": "carrier-pigeon"},
            "bassi": {"command": "x"},  # the meta-tools' server name
        },
    )
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    write_config(root, {"hostile": stdio_entry("hostile_server.py", marker=MARKER)})
    return root


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


# list


def test_list_groups_tools_by_server_with_status_and_reasons(troubled: Path) -> None:
    result = run_bassi(troubled, "tools", "list")
    out = lines(result.stdout)
    assert result.returncode == 1  # a server failed
    assert "good connected 5 tools" in out
    assert "paged connected 5 tools" in out
    assert "gone failed 0 tools" in out
    assert "off disabled 0 tools" in out
    assert "bash connected 1 tool" in out  # bassi's own servers are listed too
    assert "add Add two integers." in out
    assert "beta_two Tool beta_two from page 2." in out
    assert "exited with code 3" in out
    assert "Error: GITHUB_TOKEN is not set" in out
    assert out.index("bash connected 1 tool") < out.index("good connected 5 tools")
    assert out[-1].startswith("8 servers (6 connected, 1 failed, 1 disabled)")
    errors = " ".join(lines(result.stderr))
    assert "error:" in errors
    assert "server 'bad name': invalid server name" in errors
    assert "server 'weird': unknown type \"carrier-pigeon\"" in errors
    assert "server 'bassi': this name is bassi's own" in errors


def test_list_json(troubled: Path) -> None:
    result = run_bassi(troubled, "tools", "list", "--json")
    data = json.loads(result.stdout)
    servers = {s["name"]: s for s in data["servers"]}
    assert servers["good"]["status"] == "connected"
    assert servers["good"]["origin"] == "external"
    assert servers["bash"]["origin"] == "in-process"
    add = next(t for t in servers["good"]["tools"] if t["name"] == "add")
    assert add["qualified_name"] == "mcp__good__add"
    assert add["input_schema"]["required"] == ["a"]
    assert add["available"] is True
    assert servers["gone"]["status"] == "failed"
    assert servers["gone"]["error"].startswith("exited with code 3")
    assert servers["off"]["status"] == "disabled"
    assert {p["server"] for p in data["problems"]} == {"bad name", "weird", "bassi"}
    assert all(p["severity"] == "error" for p in data["problems"])
    assert result.returncode == 1


def test_mcp_config_flag_reads_another_file(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "servers.json"
    elsewhere.write_text(
        json.dumps({"mcpServers": {"other": stdio_entry("paged_server.py", marker=MARKER)}})
    )
    result = run_bassi(project, "--mcp-config", str(elsewhere), "tools", "list")
    out = lines(result.stdout)
    assert "other connected 5 tools" in out
    assert not any(line.startswith("good ") for line in out)
    assert result.returncode == 0  # every server connected
    assert result.stderr == ""


def test_a_broken_config_file_is_a_warning_and_bassis_servers_still_list(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}')
    result = run_bassi(tmp_path, "tools", "list")
    assert result.returncode == 0
    assert "invalid JSON at line 1, column" in result.stderr
    assert "bash connected 1 tool" in lines(result.stdout)


SECRET = f"tok-{MARKER}"


@pytest.fixture(scope="module")
def secretive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Servers whose entries take a token from the environment: one that works, one that
    fails echoing its command line on stderr, one unreachable URL and one bad URL."""
    root = tmp_path_factory.mktemp("secretive")
    write_config(
        root,
        {
            "good": stdio_entry("good_server.py", "--token=${TOKEN}", marker=MARKER),
            "gone": stdio_entry("exit_server.py", "--token=${TOKEN}", marker=MARKER),
            "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp?key=${TOKEN}"},
            "typo": {"type": "http", "url": "${TOKEN}"},
        },
    )
    return root


def test_list_masks_what_the_config_took_from_the_environment(secretive: Path) -> None:
    result = run_bassi(secretive, "tools", "list", env={"TOKEN": SECRET})
    assert SECRET not in result.stdout + result.stderr
    out = "\n".join(lines(result.stdout))
    assert "good_server.py --token=${TOKEN}" in out
    assert "exit_server: starting --token=${TOKEN}" in out
    assert "http://127.0.0.1:1/mcp?key=${TOKEN}" in out
    assert "got '${TOKEN}'" in result.stderr

    as_json = run_bassi(secretive, "tools", "list", "--json", env={"TOKEN": SECRET})
    assert SECRET not in as_json.stdout + as_json.stderr
    data = json.loads(as_json.stdout)
    servers = {s["name"]: s for s in data["servers"]}
    assert servers["good"]["target"].endswith("good_server.py --token=${TOKEN}")
    assert "exit_server: starting --token=${TOKEN}" in servers["gone"]["error"]
    assert servers["remote"]["target"] == "http://127.0.0.1:1/mcp?key=${TOKEN}"
    assert "${TOKEN}" in servers["remote"]["error"]
    assert data["problems"][0]["message"].endswith("got '${TOKEN}'")


# search


def test_search_ranks_the_matching_tool_first(project: Path) -> None:
    result = run_bassi(project, "tools", "search", "add", "two", "integers")
    assert result.returncode == 0, result.stderr
    first = lines(result.stdout)[0]
    assert first.startswith("1. good/add ")
    assert "Add two integers." in first


def test_search_by_exact_name_and_server_filter(project: Path) -> None:
    result = run_bassi(project, "tools", "search", "echo", "--server", "crashy", "--limit", "3")
    assert result.returncode == 0, result.stderr
    refs = [line.split()[1] for line in lines(result.stdout) if line[:1].isdigit()]
    assert refs[0] == "crashy/echo"
    assert all(ref.startswith("crashy/") for ref in refs)
    assert len(refs) <= 3


def test_search_json_carries_scores_and_matched_terms(project: Path) -> None:
    result = run_bassi(project, "tools", "search", "beta", "tool", "--json", "--limit", "2")
    data = json.loads(result.stdout)
    assert data["query"] == "beta tool"
    assert len(data["hits"]) == 2
    first = data["hits"][0]
    assert first["ref"].startswith("paged/beta_")
    assert first["qualified_name"] == f"mcp__paged__{first['name']}"
    assert first["score"] > 0
    assert "beta" in first["matched_terms"]
    assert first["available"] is True


def test_search_without_hits_and_with_an_unknown_server(project: Path) -> None:
    nothing = run_bassi(project, "tools", "search", "zzqxv")
    assert nothing.returncode == 1
    assert nothing.stdout == ""
    assert "no tool matches 'zzqxv'" in nothing.stderr
    unknown = run_bassi(project, "tools", "search", "echo", "--server", "nope")
    assert unknown.returncode == 2
    assert "unknown server 'nope'" in unknown.stderr


def test_search_explains_each_rank_and_labels_weak_matches(project: Path) -> None:
    result = run_bassi(
        project, "tools", "search", "add", "two", "integers", "--explain", env={"COLUMNS": "80"}
    )
    assert result.returncode == 0, result.stderr
    text = lines(result.stdout)
    assert text[0].startswith("1. good/add ")
    assert "Add two integers. [add, two, integers]" in text[0]  # on one line at 80 columns
    assert text[1].startswith("words: covers ")
    assert text[2].startswith("meaning: ")
    data = json.loads(run_bassi(project, "tools", "search", "add integers", "--json").stdout)
    assert 0 < data["hits"][-1]["score"] <= data["hits"][0]["score"] <= 1
    assert data["hits"][0]["weak"] is False
    assert any(hit["weak"] for hit in data["hits"])


def test_search_takes_fielded_filters_and_reports_unreadable_ones(project: Path) -> None:
    def refs(*query: str) -> list[str]:
        result = run_bassi(project, "tools", "search", *query, "--json", "--limit", "50")
        assert result.returncode == 0, result.stderr
        return [hit["ref"] for hit in json.loads(result.stdout)["hits"]]

    assert sorted(refs("name:ec*")) == ["crashy/echo", "good/echo"]
    good = {"good/add", "good/fail", "good/where", "good/sleep"}  # and good/echo
    assert set(refs("server:good", "NOT", "echo")) == good
    assert refs('"two integers"') == ["good/add"]
    quoted = run_bassi(project, "tools", "search", 'add "1234 and 5678" as integers')
    assert lines(quoted.stdout)[0].startswith("1. good/add ")  # no tool says that number
    assert 'no tool fits "1234 and 5678": ranked by the words instead' in quoted.stderr
    bad = run_bassi(project, "tools", "search", "name:")
    assert bad.returncode == 2
    assert "cannot search: name: needs a value" in bad.stderr


def test_a_second_run_answers_from_the_cache_and_starts_nothing(tmp_path: Path) -> None:
    started = tmp_path / "started.log"
    servers = {
        "good": stdio_entry("good_server.py", "--started-log", str(started), marker=MARKER),
        "off": stdio_entry("good_server.py", "--started-log", str(started), disabled=True),
    }
    write_config(tmp_path, servers)
    first = run_bassi(tmp_path, "tools", "search", "add", "two", "integers")
    assert first.returncode == 0, first.stderr
    assert started.read_text().count("started") == 1
    again = run_bassi(tmp_path, "tools", "search", "add", "two", "integers")
    assert again.stdout == first.stdout
    listing = json.loads(run_bassi(tmp_path, "tools", "list", "--json").stdout)
    assert started.read_text().count("started") == 1  # neither run started a server
    assert listing["cached"] is True
    off = next(s for s in listing["servers"] if s["name"] == "off")
    assert (off["status"], off["tools"]) == ("disabled", [])

    refreshed = json.loads(run_bassi(tmp_path, "tools", "list", "--json", "--refresh").stdout)
    assert refreshed["cached"] is False
    assert started.read_text().count("started") == 2
    servers["good"]["args"].append("--banner")  # a changed entry is connected again
    write_config(tmp_path, servers)
    changed = json.loads(run_bassi(tmp_path, "tools", "list", "--json").stdout)
    assert changed["cached"] is False
    assert started.read_text().count("started") == 3


# show


@pytest.mark.parametrize("name", ["mcp__good__add", "good/add", "add"])
def test_show_prints_the_card_for_every_spelling_of_a_name(project: Path, name: str) -> None:
    result = run_bassi(project, "tools", "show", name)
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert out[0] == "good/add mcp__good__add"
    assert out[1] == "server good · external · connected"
    assert "Add two integers." in out
    assert "Returns their sum." in out
    header = next(line for line in out if "required" in line)
    assert [w for w in header.split() if w.isalpha()] == [
        "name",
        "type",
        "required",
        "default",
        "description",
    ]
    rows = [line for line in out if line.startswith(("a ", "b "))]
    assert [[w for w in row.split() if w.isalnum()] for row in rows] == [
        ["a", "integer", "yes"],
        ["b", "integer", "no", "2"],
    ]


def test_show_json(project: Path) -> None:
    result = run_bassi(project, "tools", "show", "paged/beta_one", "--json")
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["qualified_name"] == "mcp__paged__beta_one"
    assert data["description"] == "Tool beta_one from page 2."
    assert data["status"] == "connected"
    assert data["input_schema"] == {"type": "object", "properties": {}}


def test_show_an_unknown_name_suggests_the_closest_and_fails(project: Path) -> None:
    result = run_bassi(project, "tools", "show", "good/ad")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "no tool named 'good/ad'. Closest: good/add" in result.stderr


def test_show_an_ambiguous_name_lists_the_candidates_and_fails(project: Path) -> None:
    result = run_bassi(project, "tools", "show", "echo", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["ambiguous"] is True
    assert sorted(data["candidates"]) == ["crashy/echo", "good/echo"]


def test_show_says_when_a_schema_is_invalid_and_lists_nested_parameters(tmp_path: Path) -> None:
    write_config(tmp_path, {"unchecked": stdio_entry("unchecked_server.py", marker=MARKER)})
    legacy = run_bassi(tmp_path, "tools", "show", "unchecked/legacy")
    assert lines(legacy.stdout)[2:4] == [
        'invalid input schema: its $ref "#/definitions/missing" points to nothing in the schema',
        "bassi cannot check this tool's calls; they reach the server unchecked.",
    ]
    data = json.loads(run_bassi(tmp_path, "tools", "show", "legacy", "--json").stdout)
    assert data["schema_problem"].startswith('its $ref "#/definitions/missing"')
    paint = run_bassi(tmp_path, "tools", "show", "unchecked/paint")
    assert "invalid input schema" not in paint.stdout
    rows = [
        [cell for cell in line.split() if cell != "│"][:3]
        for line in lines(paint.stdout)
        if line.startswith("coats")
    ]
    assert rows == [["coats", "array[object]", "no"], ["coats[].minutes", "integer", "yes"]]


# hostile text


def test_hostile_descriptions_are_shown_as_plain_text(hostile: Path) -> None:
    listing = run_bassi(hostile, "tools", "list")
    card = run_bassi(hostile, "tools", "show", "hostile/attack")
    for result in (listing, card):
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stdout
        assert "\x07" not in result.stdout
        assert "pwned" not in result.stdout  # an OSC title sequence is removed whole
        assert "[bold red]Click[/bold red] [link=http://evil.example]here[/link] now." in (
            " ".join(result.stdout.split())
        )
    assert len(listing.stdout) < 2_000
    assert "Clears the screen and rings the bell." in " ".join(card.stdout.split())
    assert "q[red]" in card.stdout
    assert "red [blink]x[/blink]" in card.stdout
    assert len(card.stdout) < 40_000
    assert "more characters]" in card.stdout
