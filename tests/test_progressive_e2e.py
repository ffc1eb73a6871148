"""Progressive disclosure end to end: the real CLI, the real catalog with an external stdio
server, and the scripted model, asserting the ``tools`` array of every request the model got.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bassi.core.events import TextDelta, TurnFinished
from bassi.core.grants import Grants
from bassi.core.registry import ServerStatus
from bassi.core.runtime import ApprovalDecision
from bassi.core.settings import Settings, ToolsMode
from tests.conftest import approve_project, descendant_pids
from tests.progressive_fixtures import (
    LEDGER_SERVER,
    Approvals,
    names,
    results,
    running,
    turn,
    write_ledger_config,
)
from tests.scripted_model import RecordedRequest, ScriptedModel, reply, text, tool_call

META = {
    "mcp__bassi__tool_search",
    "mcp__bassi__tool_describe",
    "mcp__bassi__tool_load",
    "mcp__bassi__tool_active",
}
RECORD = "mcp__ledger__record_expense"
READ = "mcp__ledger__read_ledger"
TOTAL = "mcp__ledger__ledger_total"
CLOSE = "mcp__ledger__close_books"
AUDIT = "mcp__ledger__audit_ledger"
LEDGER_TOOLS = {RECORD, READ, TOTAL, CLOSE, AUDIT}


@dataclass
class Ledger:
    """The external test server's trace: one line per call that really ran."""

    path: Path

    def lines(self) -> list[str]:
        if not self.path.exists():
            return []
        return [line.split(" ", 1)[1] for line in self.path.read_text().splitlines()]

    def pids(self) -> set[int]:
        if not self.path.exists():
            return set()
        return {int(line.split(" ", 1)[0]) for line in self.path.read_text().splitlines()}


@pytest.fixture
def ledger(agent_settings: Settings, tmp_path: Path) -> Ledger:
    """The ledger server in the project's servers file, approved."""
    path = tmp_path / "ledger.txt"
    write_ledger_config(agent_settings.project_dir, path)
    approve_project(agent_settings)
    return Ledger(path)


def ledger_processes() -> list[int]:
    return [pid for pid, cmd in descendant_pids().items() if str(LEDGER_SERVER) in cmd]


def when_requested(check: Callable[[RecordedRequest], None], step: Any) -> Any:
    """A script step that first looks at the request (and at the world) when it arrives."""

    def react(request: RecordedRequest) -> Any:
        check(request)
        return step

    return react


async def test_first_progressive_request_carries_only_meta_pinned_and_core_tools(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(text("Hello."))
    async with running(
        agent_settings, tools_mode=ToolsMode.PROGRESSIVE, core_tools=("bash/execute",)
    ) as runtime:
        runtime.pin("ledger/read_ledger")
        await turn(runtime, "hi")
        assert runtime.exposure() == (6, 1, ToolsMode.PROGRESSIVE)
    first = scripted_model.turn_requests[0]
    assert names(first) == META | {READ, "mcp__bash__execute"}
    system = first.system_text
    assert "- ledger (5 tools): " in system
    assert "mcp__bassi__tool_search" in system
    assert "record_expense" not in system and "close_books" not in system


async def test_search_loads_and_the_external_tool_runs_within_two_model_requests(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    ran_before: list[list[str]] = []
    scripted_model.script(
        reply(tool_call("mcp__bassi__tool_search", {"query": "record an expense in the ledger"})),
        when_requested(
            lambda _r: ran_before.append(ledger.lines()),
            reply(tool_call(RECORD, {"amount": 12.5, "note": "taxi"})),
        ),
        when_requested(lambda _r: ran_before.append(ledger.lines()), text("Recorded.")),
    )
    approvals = Approvals([ApprovalDecision.ALLOW_ONCE])
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = approvals
        servers = ledger_processes()
        events = await turn(runtime, "log a 12.50 taxi expense")
        assert ledger_processes() == servers

    first, second, third = scripted_model.turn_requests
    assert names(first) == META
    assert RECORD in names(second)
    assert names(second) - META <= LEDGER_TOOLS
    assert names(third) == names(second)
    search_result, call_result = results(events)
    assert search_result.text.splitlines()[1].startswith("ledger/record_expense — Record an")
    assert not call_result.is_error
    assert "recorded expense 12.5 (taxi)" in call_result.text
    # The tool ran after the second model request and before the third: two requests from
    # the user's message to the tool running, one meta-tool call before it.
    assert ran_before == [[], ["expense 12.5 taxi"]]
    requests_until_run = next(i for i, seen in enumerate(ran_before, start=2) if seen) - 1
    print(f"\nmodel requests from the user's message to the tool running: {requests_until_run}")
    assert requests_until_run == 2
    # Forwarded over the one process bassi started at discovery, not a CLI-started copy.
    assert len(servers) == 1
    assert ledger.pids() == set(servers)
    assert [(a.tool.ref, a.arguments) for a in approvals.asked] == [
        ("ledger/record_expense", {"amount": 12.5, "note": "taxi"})
    ]


async def test_search_then_load_a_result_it_did_not_load_then_call_it_in_the_same_turn(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    picked: list[str] = []

    def load_a_result_left_unloaded(request: RecordedRequest) -> Any:
        lines = request.tool_result_text("search").splitlines()[1:]
        unloaded = [
            line.split(" ")[0]
            for line in lines
            if line.startswith("ledger/") and not line.endswith("[loaded]")
        ]
        picked.append(next(ref for ref in unloaded if ref != "ledger/close_books"))
        return reply(tool_call("mcp__bassi__tool_load", {"names": [picked[0]]}))

    def call_it(_request: RecordedRequest) -> Any:
        arguments = {"amount": 7, "note": "late"} if picked[0].endswith("record_expense") else {}
        return reply(tool_call("mcp__" + picked[0].replace("/", "__"), arguments))

    scripted_model.script(
        reply(tool_call("mcp__bassi__tool_search", {"query": "ledger"}, id="search")),
        load_a_result_left_unloaded,
        call_it,
        text("Done."),
    )
    approvals = Approvals([ApprovalDecision.ALLOW_ONCE])
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = approvals
        events = await turn(runtime, "check the ledger")

    qualified = "mcp__" + picked[0].replace("/", "__")
    searched, loaded, ran = scripted_model.turn_requests[1:]
    assert qualified not in names(searched)
    assert len(names(searched) - META) == 3
    assert qualified in names(loaded)
    assert names(ran) == names(loaded)
    assert results(events)[1].text == f"Loaded, callable now: {qualified}"
    assert not results(events)[2].is_error
    assert [a.tool.qualified_name for a in approvals.asked] == [qualified]
    trace = {
        "ledger/record_expense": "expense 7.0 late",
        "ledger/read_ledger": "read",
        "ledger/ledger_total": "total",
        "ledger/audit_ledger": "audit",
    }
    assert ledger.lines() == [trace[picked[0]]]


async def test_tools_that_are_not_loaded_or_not_approved_never_run(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    def unpin_behind_the_clis_back(_request: RecordedRequest) -> None:
        runtime.grants.unpin(READ)

    scripted_model.script(
        # 1. A tool named without loading it: the CLI does not even know it.
        reply(tool_call(RECORD, {"amount": 1, "note": "sneaky"})),
        text("I need to load it first."),
        # 2. Loaded by the agent, but nobody is there to approve it.
        reply(tool_call("mcp__bassi__tool_load", {"names": ["record_expense"]})),
        reply(tool_call(RECORD, {"amount": 2, "note": "unapproved"})),
        text("It needs approval."),
        # 3. The CLI still lists a tool that bassi no longer exposes (a stale listing).
        when_requested(unpin_behind_the_clis_back, reply(tool_call(READ, {}))),
        text("Not available any more."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        named = results(await turn(runtime, "record 1 sneaky"))
        unapproved = results(await turn(runtime, "record 2 unapproved"))
        runtime.pin(READ)
        stale = results(await turn(runtime, "read the ledger"))

    requests = scripted_model.turn_requests
    assert names(requests[0]) == META
    assert named[0].is_error
    assert "No such tool available: mcp__ledger__record_expense" in named[0].text
    assert 'fails with "No such tool available"' in requests[1].system_text
    assert "mcp__bassi__tool_search" in requests[1].system_text

    assert unapproved[1].is_error
    assert "needs the user's approval" in unapproved[1].text
    assert "/tool ledger/record_expense" in unapproved[1].text

    assert READ in names(requests[5])
    assert stale[0].is_error
    assert "mcp__ledger__read_ledger is not loaded" in stale[0].text
    assert "mcp__bassi__tool_search" in stale[0].text
    assert "mcp__bassi__tool_load" in stale[0].text
    assert ledger.lines() == []


async def test_a_pinned_tool_is_visible_from_the_start_and_runs_without_asking(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        reply(tool_call(RECORD, {"amount": 3, "note": "coffee"})),
        text("Done."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = Approvals()
        runtime.pin("ledger/record_expense")
        events = await turn(runtime, "coffee for 3")
    assert names(scripted_model.turn_requests[0]) == META | {RECORD}
    assert not results(events)[0].is_error
    assert ledger.lines() == ["expense 3.0 coffee"]


async def test_an_agent_loaded_tool_asks_and_each_answer_does_what_it_says(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        reply(tool_call("mcp__bassi__tool_load", {"names": [RECORD, READ, TOTAL]})),
        reply(tool_call(RECORD, {"amount": 1, "note": "once"})),
        reply(tool_call(RECORD, {"amount": 2, "note": "denied"})),
        reply(tool_call(RECORD, {"amount": 3, "note": "always"})),
        reply(tool_call(RECORD, {"amount": 4, "note": "pinned"})),
        reply(tool_call(READ, {})),
        reply(tool_call(TOTAL, {})),
        text("All done."),
    )
    approvals = Approvals(
        [
            ApprovalDecision.ALLOW_ONCE,
            ApprovalDecision.DENY,
            ApprovalDecision.ALWAYS_TOOL,
            ApprovalDecision.ALWAYS_SERVER,
        ]
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = approvals
        events = await turn(runtime, "book these")
        assert [t.qualified_name for t in runtime.pinned()] == [RECORD]

    assert [a.tool.qualified_name for a in approvals.asked] == [RECORD, RECORD, RECORD, READ]
    loaded, once, denied, always, pinned, read, total = results(events)
    assert not loaded.is_error
    assert denied.is_error and "The user declined mcp__ledger__record_expense" in denied.text
    assert not any(r.is_error for r in (once, always, pinned, read, total))
    assert ledger.lines() == [
        "expense 1.0 once",
        "expense 3.0 always",
        "expense 4.0 pinned",
        "read",
        "total",
    ]
    saved = Grants.load(agent_settings)
    assert saved.pins == [RECORD]
    assert saved.servers == ["ledger"]


async def test_all_mode_exposes_every_tool_and_no_meta_tools(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(text("Hi."))
    async with running(agent_settings, tools_mode=ToolsMode.ALL) as runtime:
        everything = {t.qualified_name for t in runtime.catalog.registry.tools()}
        await turn(runtime, "hi")
        assert runtime.exposure().mode is ToolsMode.ALL
    assert {*LEDGER_TOOLS, "mcp__bash__execute"} <= everything
    assert names(scripted_model.turn_requests[0]) == everything
    assert "Every tool of these servers is loaded." in scripted_model.turn_requests[0].system_text


@pytest.mark.parametrize(
    ("budget", "mode"), [(100_000, ToolsMode.ALL), (50, ToolsMode.PROGRESSIVE)]
)
async def test_auto_mode_goes_progressive_only_over_the_token_budget(
    agent_settings: Settings,
    ledger: Ledger,
    scripted_model: ScriptedModel,
    budget: int,
    mode: ToolsMode,
) -> None:
    scripted_model.script(text("Hi."))
    async with running(
        agent_settings, tools_mode=ToolsMode.AUTO, tools_token_budget=budget
    ) as runtime:
        everything = {t.qualified_name for t in runtime.catalog.registry.tools()}
        await turn(runtime, "hi")
        assert runtime.exposure().mode is mode
    expected = everything if mode is ToolsMode.ALL else META
    assert names(scripted_model.turn_requests[0]) == expected


async def test_an_external_server_crashing_mid_call_is_an_error_result_and_the_session_goes_on(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        reply(tool_call(CLOSE, {})),
        reply(tool_call(CLOSE, {})),
        text("The ledger server is down."),
        text("Still here."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.pin(CLOSE)
        crashed, again = results(await turn(runtime, "close the books"))
        assert runtime.catalog.registry.server("ledger").status is ServerStatus.FAILED
        after = await turn(runtime, "are you there?")

    assert crashed.is_error
    assert "ledger" in crashed.text and "books on fire" in crashed.text
    assert scripted_model.turn_requests[1].tool_results()[0]["is_error"] is True
    assert again.is_error
    assert "The server 'ledger' is not available (exited with code 9" in again.text
    assert ledger.lines() == ["closing"]
    assert "Still here." in "".join(e.text for e in after if isinstance(e, TextDelta))


async def test_resuming_a_conversation_keeps_its_history_and_starts_with_only_chosen_tools(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        reply(tool_call("mcp__bassi__tool_load", {"names": ["read_ledger"]})),
        text("Noted: 42."),
        text("You said 42."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        first = await turn(runtime, "remember the number 42")
        finished = first[-1]
        assert isinstance(finished, TurnFinished)
        listed = await runtime.list_sessions()
        assert finished.session_id in [s.session_id for s in listed]
        await runtime.resume(finished.session_id)
        await turn(runtime, "which number?")

    loaded_turn, resumed = scripted_model.turn_requests[1], scripted_model.turn_requests[2]
    assert READ in names(loaded_turn)
    assert names(resumed) == META
    assert "remember the number 42" in json.dumps(resumed.messages)


async def test_claude_code_rules_of_the_project_hide_deny_and_approve_tools(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    rules = {
        "permissions": {"allow": ["mcp__ledger__read_*"], "deny": ["mcp__ledger__close_books"]}
    }
    claude_dir = agent_settings.project_dir / ".claude"
    claude_dir.mkdir()
    (claude_dir / "settings.json").write_text(json.dumps(rules))
    approve_project(agent_settings, rules=True)
    scripted_model.script(
        reply(tool_call("mcp__bassi__tool_load", {"names": [CLOSE, READ]})),
        reply(tool_call(READ, {})),
        text("Read it."),
        text("Hi."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = Approvals()
        events = await turn(runtime, "read the ledger")
    async with running(agent_settings, tools_mode=ToolsMode.ALL) as runtime:
        await turn(runtime, "hi")

    loaded, read = results(events)
    assert "Loaded, callable now: mcp__ledger__read_ledger" in loaded.text
    assert "mcp__ledger__close_books is not allowed (denied by mcp__ledger__close_books" in (
        loaded.text
    )
    assert not read.is_error
    assert ledger.lines() == ["read"]
    requests = scripted_model.turn_requests
    assert CLOSE not in names(requests[1])
    assert names(requests[3]) >= LEDGER_TOOLS - {CLOSE}
    assert CLOSE not in names(requests[3])


async def test_an_unpinned_tool_leaves_the_model_requests_and_comes_back_when_pinned_again(
    agent_settings: Settings, ledger: Ledger, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        text("Noted."),
        text("Gone."),
        reply(tool_call(RECORD, {"amount": 2, "note": "tea"})),
        text("Recorded."),
    )
    async with running(agent_settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        runtime.approval_handler = Approvals()
        runtime.pin("ledger/record_expense")
        await turn(runtime, "one")
        runtime.unpin("ledger/record_expense")
        await turn(runtime, "two")
        runtime.pin("ledger/record_expense")
        events = await turn(runtime, "tea for 2")

    first, second, third, _ = scripted_model.turn_requests
    assert names(first) == META | {RECORD}
    assert names(second) == META
    assert names(third) == META | {RECORD}
    assert not results(events)[0].is_error
    assert ledger.lines() == ["expense 2.0 tea"]
