"""Which tools run without asking, per mode, measured through the real CLI.

For ``all`` and ``progressive`` (``auto``, the default, resolves to one of them, and what it
allows is that mode's column; test_trust_e2e runs the default too), one conversation calls one
tool of every kind (a meta-tool, a pinned tool, a
tool an allow rule of an approved project covers, one a rule of an unapproved settings file
covers, a tool of a server allowed "always", a read-only tool, any other tool); the approval
handler answers "allow once" and records what it was asked. The same runs again with the
read-only opt-in. The table is printed (``pytest -s``) and checked against the policy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bassi.core.runtime import ApprovalDecision
from bassi.core.settings import Settings, ToolsMode
from tests.conftest import approve_project
from tests.progressive_fixtures import Approvals, results, running, turn
from tests.scripted_model import ScriptedModel, reply, text, tool_call
from tests.trust_fixtures import ScriptedProject, scripted_tool

ROWS = {
    "meta-tool (tool_active)": "mcp__bassi__tool_active",
    "pinned": "mcp__tricky__pinned_tool",
    "allow rule, approved project": "mcp__tricky__approved_rule",
    "allow rule, unapproved file": "mcp__tricky__unapproved_rule",
    "server allowed always": "mcp__always__any_tool",
    "read-only (annotation)": "mcp__tricky__read_only",
    "any other tool": "mcp__tricky__other",
}
EXPECTED_ASKS = {"allow rule, unapproved file", "any other tool"}
"""Without the read-only opt-in, the read-only tool asks too."""

TABLE: dict[tuple[str, str], str] = {}


def _project(settings: Settings) -> None:
    root = settings.project_dir
    tricky = ScriptedProject(root, "tricky")
    tricky.set_tools(
        [
            scripted_tool("pinned_tool"),
            scripted_tool("approved_rule"),
            scripted_tool("unapproved_rule"),
            scripted_tool("read_only", readOnlyHint=True),
            scripted_tool("other"),
        ]
    )
    always = ScriptedProject(root, "always")
    always.set_tools([scripted_tool("any_tool")])
    servers = {"tricky": tricky.entry(), "always": always.entry()}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    claude = root / ".claude"
    claude.mkdir()
    shared = {"permissions": {"allow": ["mcp__tricky__approved_rule"]}}
    (claude / "settings.json").write_text(json.dumps(shared))
    approve_project(settings, rules=True)
    local = {"permissions": {"allow": ["mcp__tricky__unapproved_rule"]}}
    (claude / "settings.local.json").write_text(json.dumps(local))


@pytest.mark.parametrize("read_only_opt_in", [False, True])
@pytest.mark.parametrize("mode", [ToolsMode.ALL, ToolsMode.PROGRESSIVE])
async def test_which_tools_run_without_asking(
    mode: ToolsMode,
    read_only_opt_in: bool,
    agent_settings: Settings,
    scripted_model: ScriptedModel,
    tmp_path: Path,
) -> None:
    _project(agent_settings)
    loads = [n.removeprefix("mcp__").replace("__", "/") for n in ROWS.values()]
    steps = [reply(tool_call("mcp__bassi__tool_load", {"names": loads[1:]}))]
    scripted_model.script(
        *(steps if mode is ToolsMode.PROGRESSIVE else []),
        *(reply(tool_call(name, {})) for name in ROWS.values()),
        text("Done."),
    )
    approvals = Approvals([ApprovalDecision.ALLOW_ONCE] * len(ROWS))
    async with running(
        agent_settings, tools_mode=mode, auto_approve_read_only=read_only_opt_in
    ) as runtime:
        runtime.approval_handler = approvals
        runtime.pin("tricky/pinned_tool")
        runtime.grants.allow_server("always", runtime.catalog.registry.server("always").tools)
        events = await turn(runtime, "call every tool")
    calls = results(events)[1:] if mode is ToolsMode.PROGRESSIVE else results(events)
    asked = {a.called for a in approvals.asked}
    column = f"{mode.value}{', read-only opt-in' if read_only_opt_in else ''}"
    offered = set()
    for (row, name), call in zip(ROWS.items(), calls, strict=True):
        if "No such tool available" in call.text:
            TABLE[(row, column)] = "not offered"
            continue
        assert not call.is_error, call.text
        offered.add(row)
        TABLE[(row, column)] = "asks" if name in asked else "runs without asking"
    expected = set(EXPECTED_ASKS) | (set() if read_only_opt_in else {"read-only (annotation)"})
    assert {row for row, name in ROWS.items() if name in asked} == expected
    # The meta-tools are listed only in progressive mode.
    assert ("meta-tool (tool_active)" in offered) is (mode is ToolsMode.PROGRESSIVE)


def teardown_module() -> None:
    """Print the measured table once every mode ran."""
    columns = sorted({c for _, c in TABLE}, key=lambda c: (c.split(",")[0], "," in c))
    if not columns:
        return
    lines = ["| tool | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for row in ROWS:
        lines.append(f"| {row} | " + " | ".join(TABLE.get((row, c), "-") for c in columns) + " |")
    print("\nWhich tools run without asking, per mode (measured):\n" + "\n".join(lines))
