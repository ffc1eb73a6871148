"""The exposed set: what the model sees in each mode, and why."""

from __future__ import annotations

from pathlib import Path

from bassi.core.exposure import Reason, ToolExposure, estimate_tokens
from bassi.core.registry import Registry
from bassi.core.settings import ToolsMode
from bassi.core.tools import ToolInfo
from tests.progressive_fixtures import policy_of, registry_of, tool_def


def _registry() -> Registry:
    return registry_of(
        {
            "git": [tool_def("git_status"), tool_def("git_log"), tool_def("git_commit")],
            "time": [tool_def("get_current_time")],
            "memory": [tool_def("read_graph"), tool_def("create_entities")],
            "docs": [tool_def("lookup")],
        },
        always_load=["time"],
        failed=["docs"],
    )


def _exposure(
    config_dir: Path,
    registry: Registry,
    mode: ToolsMode,
    *,
    pins: set[str] | None = None,
    denied: set[str] | None = None,
    budget: int = 20_000,
    core: tuple[str, ...] = (),
) -> ToolExposure:
    """The visible half of a policy whose grants and trust live in a fresh directory."""
    policy = policy_of(
        registry,
        config_dir,
        mode,
        pins=sorted(pins or ()),
        deny=tuple(sorted(denied or ())),
        tools_token_budget=budget,
        core_tools=core,
    )
    return policy.exposure


def _all_mode_tokens(registry: Registry) -> int:
    return estimate_tokens(sum(t.definition_chars for t in registry.tools(available_only=True)))


def _names(exposure: ToolExposure) -> set[str]:
    return {t.qualified_name for t in exposure.tools()}


def test_progressive_shows_only_pinned_core_and_always_load_tools(tmp_path: Path) -> None:
    exposure = _exposure(
        tmp_path,
        _registry(),
        ToolsMode.PROGRESSIVE,
        pins={"mcp__git__git_status"},
        core=("memory/read_graph",),
    )
    assert _names(exposure) == {
        "mcp__git__git_status",
        "mcp__time__get_current_time",
        "mcp__memory__read_graph",
    }
    registry = _registry()
    git_status = registry.resolve("git_status")
    assert exposure.reason(git_status) is Reason.PINNED
    assert exposure.reason(registry.resolve("get_current_time")) is Reason.ALWAYS_LOAD
    assert exposure.reason(registry.resolve("read_graph")) is Reason.CORE
    assert exposure.reason(registry.resolve("git_log")) is None


def test_loading_exposes_for_the_session_and_reports_what_changed(tmp_path: Path) -> None:
    registry = _registry()
    exposure = _exposure(tmp_path, registry, ToolsMode.PROGRESSIVE, denied={"mcp__git__git_commit"})
    before = exposure.snapshot()
    added = exposure.load(
        [registry.resolve("git_log"), registry.resolve("git_commit"), registry.resolve("lookup")]
    )
    assert [t.qualified_name for t in added] == ["mcp__git__git_log"]
    assert exposure.reason(registry.resolve("git_log")) is Reason.LOADED
    after = exposure.snapshot()
    changed = {s for s in after if after[s] != before[s]}
    assert changed == {"git"}
    assert exposure.load([registry.resolve("git_log")]) == []
    exposure.reset_loaded()
    assert "mcp__git__git_log" not in _names(exposure)


def test_denied_tools_are_never_exposed_even_when_pinned_or_in_all_mode(tmp_path: Path) -> None:
    denied = {"mcp__git__git_commit", "mcp__time__get_current_time"}
    for mode in (ToolsMode.ALL, ToolsMode.PROGRESSIVE):
        exposure = _exposure(
            tmp_path, _registry(), mode, pins={"mcp__git__git_commit"}, denied=denied
        )
        assert not denied & _names(exposure)


def test_all_mode_exposes_every_available_tool(tmp_path: Path) -> None:
    exposure = _exposure(tmp_path, _registry(), ToolsMode.ALL)
    assert _names(exposure) == {
        "mcp__git__git_status",
        "mcp__git__git_log",
        "mcp__git__git_commit",
        "mcp__time__get_current_time",
        "mcp__memory__read_graph",
        "mcp__memory__create_entities",
    }
    assert exposure.summary().exposed == 6
    assert exposure.summary().mode is ToolsMode.ALL


def test_auto_goes_progressive_when_definitions_exceed_the_budget(tmp_path: Path) -> None:
    registry = _registry()
    total = _all_mode_tokens(registry)
    assert _exposure(tmp_path, registry, ToolsMode.AUTO, budget=total).mode is ToolsMode.ALL
    tight = _exposure(tmp_path, registry, ToolsMode.AUTO, budget=total - 1)
    assert tight.mode is ToolsMode.PROGRESSIVE
    assert _names(tight) == {"mcp__time__get_current_time"}


def test_auto_reconsiders_when_a_server_brings_more_tools(tmp_path: Path) -> None:
    registry = _registry()
    exposure = _exposure(tmp_path, registry, ToolsMode.AUTO, budget=_all_mode_tokens(registry) + 50)
    assert exposure.mode is ToolsMode.ALL
    registry.set_tools("docs", [ToolInfo.from_mcp("docs", tool_def("lookup", "x" * 1000))])
    assert exposure.mode is ToolsMode.PROGRESSIVE


def test_summary_counts_exposed_and_pinned(tmp_path: Path) -> None:
    exposure = _exposure(
        tmp_path, _registry(), ToolsMode.PROGRESSIVE, pins={"mcp__git__git_status", "mcp__gone__x"}
    )
    summary = exposure.summary()
    assert (summary.exposed, summary.pinned, summary.mode) == (2, 1, ToolsMode.PROGRESSIVE)


def test_the_summary_counts_what_a_listing_of_every_tool_shows(tmp_path: Path) -> None:
    """The status bar's count is found from what chose each tool; it must agree with asking
    about every tool, whatever chose it and whatever keeps it out."""
    registry = _registry()
    exposure = _exposure(
        tmp_path,
        registry,
        ToolsMode.PROGRESSIVE,
        pins={"mcp__git__git_status", "mcp__git__git_commit", "mcp__docs__lookup", "mcp__gone__x"},
        denied={"mcp__git__git_commit"},
        core=("memory/read_graph", "time/get_current_time"),
    )
    exposure.load([registry.resolve("create_entities")])
    listed = exposure.tools()
    assert {t.qualified_name for t in listed} == {
        "mcp__git__git_status",
        "mcp__time__get_current_time",
        "mcp__memory__read_graph",
        "mcp__memory__create_entities",
    }
    summary = exposure.summary()
    assert (summary.exposed, summary.pinned) == (len(listed), 1)
