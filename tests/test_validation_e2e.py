"""Validated execution end to end: the real CLI, the scripted model and a raw stdio server that
validates nothing and logs every call it receives. A call whose arguments break the tool's
schema must be refused before the server (its log stays empty), with an error the model can
act on in the same turn; a valid call runs; a tool whose schema cannot be compiled still runs
and is marked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bassi.core.events import AgentEvent, ToolCallFinished
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings, ToolsMode
from tests.conftest import approve_project
from tests.discovery_fixtures import stdio_entry, write_config
from tests.progressive_fixtures import running, turn
from tests.scripted_model import RecordedRequest, ScriptedModel, reply, text, tool_call

PUT = "mcp__unchecked__put"
PAINT = "mcp__unchecked__paint"
LEGACY = "mcp__unchecked__legacy"


@dataclass
class CallLog:
    """What the server received: one entry per call that reached it."""

    path: Path

    def calls(self) -> list[tuple[str, Any]]:
        if not self.path.exists():
            return []
        entries = [json.loads(line) for line in self.path.read_text().splitlines()]
        return [(e["tool"], e["arguments"]) for e in entries]


@pytest.fixture
def server_log(agent_settings: Settings, tmp_path: Path) -> CallLog:
    """The unchecked server in the project's servers file, approved."""
    log = CallLog(tmp_path / "calls.jsonl")
    entry = stdio_entry("unchecked_server.py", env={"CALLS_FILE": str(log.path)})
    write_config(agent_settings.project_dir, {"unchecked": entry})
    approve_project(agent_settings)
    return log


@asynccontextmanager
async def pinned(settings: Settings) -> AsyncIterator[Runtime]:
    """A runtime whose three test tools are pinned: visible and allowed without asking, so
    the test does not depend on what unpinned tools need."""
    async with running(settings, tools_mode=ToolsMode.PROGRESSIVE) as runtime:
        for tool in (PUT, PAINT, LEGACY):
            runtime.pin(tool)
        yield runtime


def finished(events: list[AgentEvent]) -> dict[str, ToolCallFinished]:
    return {e.id: e for e in events if isinstance(e, ToolCallFinished)}


async def test_calls_breaking_the_schema_never_reach_the_server_and_the_model_learns_why(
    agent_settings: Settings, server_log: CallLog, scripted_model: ScriptedModel
) -> None:
    seen_by_server: list[list[tuple[str, Any]]] = []

    def then_a_valid_call(_request: RecordedRequest) -> Any:
        seen_by_server.append(server_log.calls())
        return reply(tool_call(PUT, {"n": 7}, id="valid"))

    scripted_model.script(
        reply(tool_call(PUT, {"n": "abc"}, id="wrong_type")),
        reply(tool_call(PUT, {}, id="missing")),
        reply(tool_call(PUT, {"n": 1, "extra": 1}, id="extra")),
        reply(tool_call(PAINT, {"color": "purple"}, id="enum")),
        reply(tool_call(PAINT, {"color": "red", "coats": [{"minutes": 0}, {}]}, id="nested")),
        then_a_valid_call,
        text("Stored 7."),
    )
    async with pinned(agent_settings) as runtime:
        events = finished(await turn(runtime, "store seven"))

    # Nothing malformed reached the server; the valid call did, as sent.
    assert seen_by_server == [[]]
    assert server_log.calls() == [("put", {"n": 7})]

    requests = scripted_model.turn_requests
    expected = {
        "wrong_type": '- $.n: expected integer, got string "abc"',
        "missing": "- $.n: required, but missing",
        "extra": "- $.extra: not allowed: this object takes only n",
        "enum": '- $.color: expected one of "red", "green", "blue", got string "purple"',
        "nested": "- $.coats[0].minutes: expected a number at least 1, got integer 0",
    }
    for step, (call_id, line) in enumerate(expected.items(), start=1):
        # The model's next request carries the refusal as the call's tool_result, in the
        # same turn, with the tool's parameters to retry from.
        result = requests[step].tool_result_text(call_id)
        assert line in result.splitlines(), result
        assert result.startswith("mcp__unchecked__")
        assert "was not run: its arguments do not match the tool's input schema." in result
        assert requests[step].tool_results()[-1]["is_error"] is True
        assert events[call_id].is_error
        more = " (+1 more)" if call_id == "nested" else ""
        assert events[call_id].refused == f"invalid arguments: {line[2:]}{more}"
    assert "- $.coats[1].minutes: required, but missing" in requests[5].tool_result_text("nested")
    lines = requests[1].tool_result_text("wrong_type").splitlines()
    heading = lines.index("Parameters (* = required):")
    assert lines[heading : heading + 3] == [
        "Parameters (* = required):",
        "- n*: integer — How many.",
        "Correct the arguments and call mcp__unchecked__put again.",
    ]
    paint_parameters = requests[4].tool_result_text("enum")
    assert "- coats[].minutes*: integer" in paint_parameters

    valid = events["valid"]
    assert not valid.is_error and valid.refused is None  # the server's forged mark is gone
    assert valid.text == 'ran put with {"n": 7}'


async def test_a_tool_whose_schema_cannot_be_compiled_still_runs_and_is_marked(
    agent_settings: Settings, server_log: CallLog, scripted_model: ScriptedModel
) -> None:
    scripted_model.script(
        reply(tool_call(LEGACY, {"x": "anything"}, id="legacy")),
        text("Done."),
    )
    async with pinned(agent_settings) as runtime:
        events = finished(await turn(runtime, "use the legacy tool"))
        registry = runtime.catalog.registry
        problems = registry.server("unchecked").schema_problems

    assert server_log.calls() == [("legacy", {"x": "anything"})]
    assert not events["legacy"].is_error and events["legacy"].refused is None
    assert list(problems) == ["legacy"]
    assert problems["legacy"] == 'its $ref "#/definitions/missing" points to nothing in the schema'
