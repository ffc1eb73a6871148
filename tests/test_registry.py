"""The registry resolves every way a person names a tool, and remembers failed servers' tools."""

from __future__ import annotations

import difflib
import itertools
import random
import string

import pytest

from bassi.core.registry import CANDIDATES, Registry, ServerStatus, ToolNotFoundError
from bassi.core.tools import Origin, ToolInfo, is_valid_server_name, split_qualified


def _registry() -> Registry:
    registry = Registry()
    registry.add_server("git", Origin.EXTERNAL, target="uvx mcp-server-git")
    registry.set_tools("git", [ToolInfo("git", "git_status"), ToolInfo("git", "git_log")])
    registry.add_server("bash", Origin.IN_PROCESS)
    registry.set_tools("bash", [ToolInfo("bash", "execute")])
    registry.add_server("other", Origin.EXTERNAL)
    registry.set_tools("other", [ToolInfo("other", "git_status")])
    return registry


def test_in_process_servers_come_first_and_tools_take_their_servers_origin() -> None:
    registry = _registry()
    assert [s.name for s in registry.servers()] == ["bash", "git", "other"]
    assert registry.resolve("execute").origin is Origin.IN_PROCESS


@pytest.mark.parametrize("name", ["mcp__git__git_log", "git/git_log", "git_log", " git_log "])
def test_every_name_form_resolves(name: str) -> None:
    assert _registry().resolve(name).ref == "git/git_log"


def test_same_tool_name_on_two_servers_is_ambiguous_bare_but_fine_qualified() -> None:
    registry = _registry()
    with pytest.raises(ToolNotFoundError) as info:
        registry.resolve("git_status")
    assert info.value.ambiguous
    assert sorted(info.value.candidates) == ["git/git_status", "other/git_status"]
    assert registry.resolve("other/git_status").server == "other"


def test_unknown_names_suggest_the_closest_tools() -> None:
    with pytest.raises(ToolNotFoundError) as info:
        _registry().resolve("git_stauts")
    assert not info.value.ambiguous
    assert info.value.candidates[:2] == ["git/git_status", "other/git_status"]
    assert "Closest" in str(info.value)


def _crowded(tools: int) -> Registry:
    """``_registry`` plus ``tools`` tools whose names share the common words of tool names."""
    registry = _registry()
    rng = random.Random(5)
    verbs = ["get", "list", "create", "update", "delete", "search", "git", "status", "set"]
    nouns = ["file", "issue", "status", "user", "log", "branch", "page", "record", "tag"]
    for server in range(tools // 100):
        name = f"srv{server}"
        registry.add_server(name, Origin.EXTERNAL)
        made = []
        for _ in range(100):
            suffix = "".join(rng.choices(string.ascii_lowercase, k=4))
            made.append(f"{rng.choice(verbs)}_{rng.choice(nouns)}_{suffix}")
        registry.set_tools(name, [ToolInfo(name, tool) for tool in made])
    return registry


def test_closest_compares_a_bounded_number_of_tools_whatever_the_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "Did you mean" runs on the UI's loop: at 5,000 tools, a typo still finds its tool, and
    neither a 10 kB name nor a 10,000-character qualified one makes it compare more than the
    bounded candidate set (it used to run difflib on every tool with the whole name)."""
    registry = _crowded(5_000)
    compared: list[tuple[int, int]] = []
    real = difflib.SequenceMatcher

    def counting(junk: None, a: str, b: str) -> difflib.SequenceMatcher[str]:
        compared.append((len(a), len(b)))
        return real(junk, a, b)

    monkeypatch.setattr(difflib, "SequenceMatcher", counting)
    found = registry.closest("git_stauts")
    assert 0 < len(compared) <= 2 * CANDIDATES
    assert found[0] in ("git/git_status", "other/git_status") and "other/git_status" in found
    noise = "".join(random.Random(1).choices(string.ascii_lowercase + "_", k=10_000))
    long_names = [noise, "mcp__git__" + "x" * 10_000, "git_status" * 1_000]
    for name in long_names:
        compared.clear()
        assert isinstance(registry.closest(name), list)
        assert len(compared) <= 2 * CANDIDATES  # was 2 per tool: 10,006 here
        assert max(itertools.chain(*compared), default=0) <= 200
    with pytest.raises(ToolNotFoundError):
        registry.resolve(noise)


def test_failed_server_keeps_its_tools_but_they_are_unavailable() -> None:
    registry = _registry()
    changed: list[str] = []
    registry.subscribe(changed.append)
    registry.set_status("git", ServerStatus.FAILED, "exited with code 1")

    assert changed == ["git"]
    tool = registry.resolve("git/git_log")
    assert not registry.is_available(tool)
    assert tool not in registry.tools(available_only=True)
    assert registry.server("git").error == "exited with code 1"


def test_qualified_names_and_server_names() -> None:
    assert split_qualified("mcp__ms-365__list-mail-messages") == ("ms-365", "list-mail-messages")
    assert split_qualified("mcp__a__b__c") == ("a", "b__c")
    assert split_qualified("git_status") is None
    assert split_qualified("mcp__only") is None
    assert is_valid_server_name("google-maps")
    assert not is_valid_server_name("my server")
    assert not is_valid_server_name("a__b")
    assert not is_valid_server_name("")
    assert is_valid_server_name("_private")
    assert not is_valid_server_name("evil_")  # mcp__evil___run would split as evil / _run
    assert split_qualified("mcp__evil___run") == ("evil", "_run")


def test_from_mcp_tolerates_odd_shapes() -> None:
    tool = ToolInfo.from_mcp("s", {"name": "t", "description": None, "inputSchema": "bad"})
    assert (tool.description, dict(tool.input_schema)) == ("", {})
    assert ToolInfo("s", "t", "\n\n  First line  \nsecond").summary == "First line"


def test_definition_hash_changes_with_what_the_server_says_and_only_then() -> None:
    base = ToolInfo("s", "t", "Does a thing.", {"type": "object"}, {"readOnlyHint": True})
    same = ToolInfo("s", "t", "Does a thing.", {"type": "object"}, {"readOnlyHint": True})
    assert base.definition_hash == same.definition_hash
    changed = [
        ToolInfo("s", "t", "Does a thing. Also sends your files away.", {"type": "object"}),
        ToolInfo("s", "t", "Does a thing.", {"type": "object", "properties": {"x": {}}}),
        ToolInfo("s", "t", "Does a thing.", {"type": "object"}, {"readOnlyHint": False}),
    ]
    assert len({base.definition_hash, *(c.definition_hash for c in changed)}) == 4
