"""bassi's meta-tools: compact search that loads, exact loads, schemas, and helpful errors."""

from __future__ import annotations

from pathlib import Path

from mcp import Client, types

from bassi.core.bridge import CallTracker
from bassi.core.exposure import CHARS_PER_TOKEN
from bassi.core.meta_tools import LINE_TOKENS, LOAD_TOP, MetaTools
from bassi.core.registry import Registry
from bassi.core.search import ToolIndex
from bassi.core.settings import ToolsMode
from tests.progressive_fixtures import policy_of, registry_of, tool_def

HOSTILE = "[bold red]Lists things\x1b[2J\x1b]0;pwned\x07 " + "very long " * 100_000


class Harness:
    def __init__(
        self,
        config_dir: Path,
        mode: ToolsMode = ToolsMode.PROGRESSIVE,
        denied: frozenset[str] = frozenset(),
    ) -> None:
        self.registry: Registry = registry_of(
            {
                "git": [
                    tool_def("git_status", "Shows the working tree status of a repository."),
                    tool_def("git_log", "Shows the commit logs of a repository."),
                    tool_def("git_diff", "Shows changes between commits or the working tree."),
                    tool_def("git_commit", "Records changes to the repository.", message="msg"),
                ],
                "weird": [tool_def("list_things", HOSTILE)],
                "calendar": [tool_def("list_events", "Lists calendar events of the user.")],
                "down": [tool_def("down_status", "Shows status of a server that is down.")],
            },
            failed=["down"],
        )
        index = ToolIndex()
        index.sync(self.registry)
        assert index.wait_semantic(timeout=60)  # the steady state: words fused with meaning
        policy = policy_of(self.registry, config_dir, mode, deny=tuple(sorted(denied)))
        self.exposure = policy.exposure
        self.changes = 0
        self.meta = MetaTools(policy, index, changed=self._changed)

    async def _changed(self) -> None:
        self.changes += 1

    def exposed(self) -> set[str]:
        return {t.qualified_name for t in self.exposure.tools()}


async def test_search_answers_compact_lines_and_loads_the_top_results(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_search", {"query": "show the repository status", "limit": 5})
    assert not answer.is_error
    head, *lines = answer.text.splitlines()
    assert lines[0].startswith("git/git_status — Shows the working tree status")
    assert len(lines) == 5  # the limit
    assert all(len(line) <= LINE_TOKENS * CHARS_PER_TOKEN for line in lines)
    assert "loaded now" in head and "mcp__<server>__<tool>" in head
    assert "mcp__git__git_status" in h.exposed()
    assert 0 < len(h.exposed()) <= LOAD_TOP
    assert sum("[loaded]" in line for line in lines) == len(h.exposed())
    weak = [line for line in lines if line.endswith("[weak]")]
    assert weak, "a weak match is listed as such"
    assert not any(line.split(" ")[0].replace("/", "__") in str(h.exposed()) for line in weak)
    assert h.changes == 1


async def test_search_loads_nothing_when_no_tool_fits_well_and_says_so(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_search", {"query": "delete the repository"})
    head, *lines = answer.text.splitlines()
    assert head.startswith("Nothing fits 'delete the repository' well")
    assert lines and all(line.endswith("[weak match, not loaded]") for line in lines)
    assert h.exposed() == set()
    assert h.changes == 0


async def test_search_lines_stay_compact_and_inert_with_hostile_descriptions(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_search", {"query": "list things"})
    line = next(li for li in answer.text.splitlines() if li.startswith("weird/list_things"))
    assert len(line) <= LINE_TOKENS * CHARS_PER_TOKEN
    assert "\x1b" not in line and "\x07" not in line


async def test_search_never_offers_denied_tools_and_never_loads_unavailable_ones(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, denied=frozenset({"mcp__git__git_commit"}))
    answer = await h.meta.call("tool_search", {"query": "status commit changes", "limit": 10})
    assert "git_commit" not in answer.text
    assert "down/down_status — Shows status of a server that is down. [server unavailable]" in (
        answer.text.splitlines()
    )
    assert "mcp__down__down_status" not in h.exposed()


async def test_search_with_no_match_says_so_and_suggests_broader_words(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_search", {"query": "zebra quantum"})
    assert answer.text.startswith("No tools match 'zebra quantum'")
    assert h.exposed() == set()
    assert (await h.meta.call("tool_search", {})).is_error


async def test_select_form_loads_exact_names_and_explains_unknown_ones(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_search", {"query": "select:git/git_log,calendar_events"})
    assert "Loaded, callable now: mcp__git__git_log" in answer.text
    assert "No tool 'calendar_events'. Closest: calendar/list_events" in answer.text
    assert h.exposed() == {"mcp__git__git_log"}


async def test_load_makes_tools_visible_and_refuses_denied_unknown_and_unavailable(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, denied=frozenset({"mcp__git__git_commit"}))
    answer = await h.meta.call(
        "tool_load",
        {"names": ["mcp__git__git_diff", "git_comit", "git/git_commit", "down_status"]},
    )
    assert not answer.is_error
    lines = answer.text.splitlines()
    assert lines[0] == "Loaded, callable now: mcp__git__git_diff"
    assert "No tool 'git_comit'. Closest: git/git_commit" in lines[1]
    assert "mcp__git__git_commit is not allowed" in lines[2]
    assert lines[3] == "mcp__down__down_status: server is failed: exited with code 1."
    assert h.exposed() == {"mcp__git__git_diff"}
    assert h.changes == 1

    nothing = await h.meta.call("tool_load", {"names": "nope"})
    assert nothing.is_error
    assert h.changes == 1


async def test_describe_gives_the_full_schema_or_the_closest_names(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    answer = await h.meta.call("tool_describe", {"name": "git_commit"})
    assert answer.text.startswith("mcp__git__git_commit (not loaded: load it with tool_load)")
    assert answer.text.splitlines()[2:4] == [
        "Parameters (* = required):",
        "- message: string — msg",
    ]
    assert '"message":{"type":"string","description":"msg"}' in answer.text
    denied = Harness(tmp_path, denied=frozenset({"mcp__git__git_commit"}))
    answer = await denied.meta.call("tool_describe", {"name": "git_commit"})
    assert answer.text.startswith("mcp__git__git_commit is not allowed (denied by ")
    assert "msg" not in answer.text and "Input schema" not in answer.text
    missing = await h.meta.call("tool_describe", {"name": "mcp__git__git_stat"})
    assert missing.is_error
    assert "Closest: git/git_status" in missing.text


async def test_active_lists_what_is_loaded_and_why(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    assert "No tools are loaded" in (await h.meta.call("tool_active", {})).text
    await h.meta.call("tool_load", {"names": ["git_log"]})
    assert (await h.meta.call("tool_active", {})).text.splitlines() == [
        "1 tools loaded:",
        "mcp__git__git_log (loaded by the agent)",
    ]


async def test_the_mcp_server_lists_meta_tools_only_when_visible_and_answers_calls(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path)
    visible = True
    server = h.meta.server(lambda: visible, CallTracker())
    async with Client(server) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == [
            "tool_search",
            "tool_describe",
            "tool_load",
            "tool_active",
        ]
        result = await client.call_tool("tool_load", {"names": ["git_status"]})
        assert isinstance(result, types.CallToolResult)
        assert not result.is_error
        assert isinstance(result.content[0], types.TextContent)
        assert result.content[0].text == "Loaded, callable now: mcp__git__git_status"
        unknown = await client.call_tool("tool_frobnicate", {})
        assert isinstance(unknown, types.CallToolResult)
        assert unknown.is_error
    visible = False
    async with Client(h.meta.server(lambda: visible, CallTracker())) as client:
        assert (await client.list_tools()).tools == []
