"""AgentSession through the REAL bundled Claude Code CLI, against the scripted model."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from claude_agent_sdk import (
    McpSdkServerConfig,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from mcp.server import Server, ServerRequestContext

from bassi.core.events import (
    AgentError,
    AgentEvent,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from bassi.core.session import AgentSession, recent_sessions
from bassi.core.settings import Settings
from tests.conftest import HANG_SECONDS, TEST_MODEL, descendant_pids, make_agent_env
from tests.scripted_model import (
    Reply,
    ScriptedModel,
    Text,
    overloaded,
    overloaded_mid_stream,
    rate_limited,
    reply,
    server_error,
    text,
    tool_call,
    unauthorized,
)


@pytest.fixture
async def session(agent_settings: Settings) -> AsyncIterator[AgentSession]:
    agent = AgentSession(agent_settings, system_prompt="You are bassi, a test agent.")
    try:
        yield agent
    finally:
        await agent.close()


async def turn(session: AgentSession, message: str) -> list[AgentEvent]:
    return [event async for event in session.send(message)]


def reply_text(events: Sequence[AgentEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def cli_pids() -> list[int]:
    return [pid for pid, cmd in descendant_pids().items() if "_bundled/claude" in cmd]


# ------------------------------------------------------------------------------- replies


async def test_streamed_reply_arrives_in_deltas_then_a_finished_turn(
    scripted_model: ScriptedModel, agent_settings: Settings
) -> None:
    settings = replace(agent_settings, system_prompt_extra="Answer in haiku.")
    scripted_model.script(
        reply(
            "Hello from the scripted model",
            input_tokens=120,
            output_tokens=9,
            cache_read_input_tokens=40,
        ),
        text("Second answer"),
    )
    session = AgentSession(settings, system_prompt="You are bassi, a test agent.")
    try:
        events = await turn(session, "hi there")
        assert cli_pids(), "the CLI runs while the session is open"
        second = await turn(session, "and again")
    finally:
        await session.close()
    assert cli_pids() == [], "close() leaves no CLI behind"

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 3
    assert reply_text(events) == "Hello from the scripted model"  # streamed once, not twice
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert events[:-1] == deltas
    assert finished.input_tokens == 120
    assert finished.output_tokens == 9
    assert finished.cache_read_tokens == 40
    assert finished.cost_usd > 0
    assert finished.num_turns == 1
    assert finished.duration_ms >= 0
    assert finished.session_id and finished.session_id == session.session_id
    assert not finished.interrupted

    assert reply_text(second) == "Second answer"
    second_finished = second[-1]
    assert isinstance(second_finished, TurnFinished)
    assert second_finished.session_id == finished.session_id
    assert 0 < second_finished.cost_usd < finished.cost_usd  # per turn, not cumulative
    assert session.total_cost_usd == pytest.approx(finished.cost_usd + second_finished.cost_usd)

    first_request, second_request = scripted_model.turn_requests
    assert first_request.model == TEST_MODEL
    assert "You are bassi, a test agent." in first_request.system_text
    assert "Answer in haiku." in first_request.system_text
    assert first_request.tools == [], "no CLI built-in tools"
    assert first_request.last_user_text().endswith("hi there")
    history = [m["role"] for m in second_request.messages]
    assert history == ["user", "assistant", "user"]
    assert second_request.messages[1]["content"][0]["text"] == "Hello from the scripted model"


# ------------------------------------------------------------------------------- tool calls


def echo_server(tools: list[str]) -> Server[Any]:
    """An in-process MCP server whose tool list can change while it runs."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        return mt.ListToolsResult(
            tools=[
                mt.Tool(
                    name=name,
                    description=f"{name} the text back",
                    input_schema={
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"],
                    },
                )
                for name in tools
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult:
        said = (params.arguments or {}).get("text", "")
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=f"{params.name}: {said}")]
        )

    return Server("demo", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_tool_call_runs_and_its_result_returns_to_the_model(
    scripted_model: ScriptedModel, agent_settings: Settings
) -> None:
    tools = ["echo"]
    asked: list[str] = []

    async def permit(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append(name)
        if tool_input.get("text") == "forbidden":
            return PermissionResultDeny(message="The user said no.")
        return PermissionResultAllow()

    scripted_model.script(
        reply("Let me check.", tool_call("mcp__demo__echo", {"text": "ping"}, id="toolu_a")),
        text("The tool said ping."),
        reply(tool_call("mcp__demo__echo", {"text": "forbidden"}, id="toolu_b")),
        text("Understood."),
        text("Now I can shout."),
    )
    server = McpSdkServerConfig(type="sdk", name="demo", instance=echo_server(tools))
    session = AgentSession(agent_settings, mcp_servers={"demo": server}, can_use_tool=permit)
    try:
        events = await turn(session, "use the tool")
        denied = await turn(session, "try the forbidden thing")
        tools.append("shout")
        await session.refresh_server("demo")
        await turn(session, "what can you do now?")
    finally:
        await session.close()

    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started == [
        ToolCallStarted("toolu_a", "mcp__demo__echo", "demo", "echo", {"text": "ping"})
    ]
    assert [e for e in events if isinstance(e, ToolCallFinished)] == [
        ToolCallFinished("toolu_a", "echo: ping", False)
    ]
    assert events.index(started[0]) < events.index(ToolCallFinished("toolu_a", "echo: ping", False))
    assert reply_text(events) == "Let me check.The tool said ping."
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.num_turns == 2

    requests = scripted_model.turn_requests
    schema = next(t for t in requests[0].tools if t["name"] == "mcp__demo__echo")
    assert schema["input_schema"]["required"] == ["text"]
    assert requests[1].tool_result_text("toolu_a").strip() == "echo: ping"

    refusal = next(e for e in denied if isinstance(e, ToolCallFinished))
    assert refusal.id == "toolu_b" and refusal.is_error
    assert "The user said no." in refusal.text
    assert "The user said no." in requests[3].tool_result_text("toolu_b")
    assert asked == ["mcp__demo__echo", "mcp__demo__echo"]

    assert requests[0].tool_names == ["mcp__demo__echo"]
    assert sorted(requests[4].tool_names) == ["mcp__demo__echo", "mcp__demo__shout"]


# ------------------------------------------------------------------------------- errors


async def test_rejected_key_is_a_clear_auth_error(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(unauthorized("invalid x-api-key"))
    events = await turn(session, "hello")
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, AgentError)
    assert error.kind == "auth"
    assert error.message.startswith("ANTHROPIC_API_KEY was rejected")
    assert "export ANTHROPIC_API_KEY=" in error.hint
    assert len(scripted_model.turn_requests) == 1


async def test_a_rejected_key_is_reported_at_the_first_retry_not_after_ten(
    scripted_model: ScriptedModel, agent_settings: Settings, tmp_path: Path
) -> None:
    """The CLI retries a 401 ten times over about three minutes; bassi stops it at the first
    retry and says what to do. Retries stay on for everything else (the env keeps the
    CLI's default of ten)."""
    env = make_agent_env(tmp_path / "home", scripted_model.base_url)
    del env["CLAUDE_CODE_MAX_RETRIES"]
    scripted_model.script(*[unauthorized()] * 11, text("Fine now."))
    session = AgentSession(replace(agent_settings, env=env))
    try:
        events = await asyncio.wait_for(turn(session, "hello"), 60)
        assert len(scripted_model.turn_requests) <= 2  # not eleven
        (error,) = events
        assert isinstance(error, AgentError) and error.kind == "auth"
        assert error.message.startswith("ANTHROPIC_API_KEY was rejected by the Anthropic API")
        assert "(HTTP 401)" in error.message
        assert "/login" in error.hint
        assert "retry" not in error.message.lower()
    finally:
        await session.close()


async def test_api_failures_are_clear_errors_and_the_session_stays_usable(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(
        server_error(),
        text("Back after the 500."),
        overloaded(),
        text("Back after the 529."),
        overloaded_mid_stream(),
        overloaded(),  # the CLI's non-streamed second attempt of the same turn
        rate_limited(),
        overloaded_mid_stream(),
        text("Recovered without streaming."),  # the non-streamed second attempt succeeds
    )
    outcomes: list[tuple[str, str]] = []
    for message in ["one", "two", "three", "four", "five", "six", "seven"]:
        events = await turn(session, message)
        last = events[-1]
        if isinstance(last, AgentError):
            assert "again" in last.hint
            outcomes.append((last.kind, last.message))
        else:
            assert isinstance(last, TurnFinished)
            outcomes.append(("ok", reply_text(events)))

    assert [kind for kind, _ in outcomes] == [
        "api",
        "ok",
        "overloaded",
        "ok",
        "overloaded",
        "rate_limit",
        "ok",
    ]
    assert "500" in outcomes[0][1]
    assert outcomes[1][1] == "Back after the 500."
    assert "529" in outcomes[2][1]
    assert outcomes[3][1] == "Back after the 529."
    assert "429" in outcomes[5][1]
    assert outcomes[6] == ("ok", "Recovered without streaming.")  # shown once, though unstreamed
    streamed = [r.body["stream"] for r in scripted_model.turn_requests]
    assert streamed == [True, True, True, True, True, False, True, True, False]


async def test_cli_retries_are_reported_and_the_turn_recovers(
    scripted_model: ScriptedModel, agent_settings: Settings, tmp_path: Path
) -> None:
    env = make_agent_env(tmp_path / "home", scripted_model.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    scripted_model.script(server_error(), text("Recovered."))
    session = AgentSession(replace(agent_settings, env=env))
    try:
        events = await turn(session, "hello")
    finally:
        await session.close()
    retry = events[0]
    assert isinstance(retry, Retrying)
    assert (retry.attempt, retry.max_retries, retry.error_status) == (1, 1, 500)
    assert retry.delay_ms > 0
    assert reply_text(events) == "Recovered."
    assert isinstance(events[-1], TurnFinished)


# ------------------------------------------------------------------------------- control


async def test_interrupt_during_a_slow_stream_ends_the_turn_promptly(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(
        text("word " * 200, chunks=200, delay=0.25),  # fifty seconds if left alone
        text("Fresh start."),
    )
    events: list[AgentEvent] = []
    interrupted_at = 0.0
    async for event in session.send("tell me a long story"):
        events.append(event)
        if len(events) == 2:
            interrupted_at = time.monotonic()
            await session.interrupt()
    ended_after = time.monotonic() - interrupted_at
    assert ended_after < HANG_SECONDS
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.interrupted
    assert 0 < len(reply_text(events)) < len("word " * 200)

    after = await turn(session, "something else")
    assert reply_text(after) == "Fresh start."
    assert "[Request interrupted by user]" in scripted_model.turn_requests[1].last_user_text()


async def test_an_interrupted_reply_still_counts_its_tokens(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    """The CLI's result for an interrupted turn reports no tokens, only a cost; the tokens
    that streamed are counted, so the status bar never shows "0 tokens · $0.0021"."""
    scripted_model.script(
        Reply((Text("word " * 40, 40),), delay=0.25, input_tokens=321, cache_read_input_tokens=7)
    )
    events: list[AgentEvent] = []
    async for event in session.send("a long one"):
        events.append(event)
        if len(events) == 2:
            await session.interrupt()
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.interrupted
    assert finished.cost_usd > 0
    assert (finished.input_tokens, finished.cache_read_tokens) == (321, 7)


async def test_an_abandoned_turn_does_not_leak_into_the_next(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(text("word " * 40, chunks=40, delay=0.25), text("Only this."))
    stream = session.send("a long one")
    async for event in stream:
        assert isinstance(event, TextDelta)
        break
    await stream.aclose()
    events = await turn(session, "next")
    assert reply_text(events) == "Only this."
    assert isinstance(events[-1], TurnFinished) and not events[-1].interrupted


async def test_a_dead_cli_is_reported_and_restarted_with_the_conversation(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(
        text("Remember the number 42."),
        text("word " * 40, chunks=40, delay=0.25),
        text("It was 42."),
    )
    await turn(session, "remember")
    first_session_id = session.session_id
    events: list[AgentEvent] = []
    async for event in session.send("long answer please"):
        events.append(event)
        if len(events) == 1:
            for pid in cli_pids():
                os.kill(pid, signal.SIGKILL)
    error = events[-1]
    assert isinstance(error, AgentError) and error.kind == "connection"
    assert "again" in error.hint

    after = await turn(session, "what was the number?")
    assert reply_text(after) == "It was 42."
    history = scripted_model.turn_requests[-1].messages
    assert history[1]["content"][0]["text"] == "Remember the number 42."
    assert session.session_id == first_session_id


async def test_no_credentials_is_an_actionable_error_without_starting_the_cli(
    scripted_model: ScriptedModel, project_dir: Path, tmp_path: Path
) -> None:
    env = make_agent_env(tmp_path / "home", scripted_model.base_url, api_key=None)
    session = AgentSession(Settings(project_dir=project_dir, model=TEST_MODEL, env=env))
    events = await turn(session, "hello")
    assert cli_pids() == []
    await session.close()
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, AgentError) and error.kind == "credentials"
    assert "export ANTHROPIC_API_KEY=" in error.hint
    assert "auth login" in error.hint
    assert scripted_model.requests == []


async def test_conversations_can_be_listed_resumed_and_continued(
    scripted_model: ScriptedModel, agent_settings: Settings
) -> None:
    scripted_model.script(
        text("Noted: the password is swordfish."),
        text("Resumed fine."),
        text("Continued fine."),
    )
    first = AgentSession(agent_settings)
    try:
        await turn(first, "remember swordfish")
    finally:
        await first.close()
    listed = recent_sessions(agent_settings)
    assert [s.session_id for s in listed] == [first.session_id]
    assert listed[0].first_prompt == "remember swordfish"

    resumed = AgentSession(agent_settings, resume=first.session_id)
    try:
        assert reply_text(await turn(resumed, "what is the password?")) == "Resumed fine."
    finally:
        await resumed.close()
    continued = AgentSession(replace(agent_settings, continue_session=True))
    try:
        assert reply_text(await turn(continued, "and now?")) == "Continued fine."
    finally:
        await continued.close()

    def said(request_index: int) -> list[str]:
        messages = scripted_model.turn_requests[request_index].messages
        return [
            b.get("text", "") for m in messages for b in m["content"] if m["role"] == "assistant"
        ]

    assert said(1) == ["Noted: the password is swordfish."]
    assert said(2) == ["Noted: the password is swordfish.", "Resumed fine."]


async def test_close_during_a_turn_ends_it_and_leaves_no_process(
    scripted_model: ScriptedModel, session: AgentSession
) -> None:
    scripted_model.script(text("word " * 200, chunks=200, delay=0.25))  # fifty seconds
    events: list[AgentEvent] = []
    started = time.monotonic()

    first_event = asyncio.Event()

    async def read() -> None:
        async for event in session.send("long"):
            events.append(event)
            first_event.set()

    reader = asyncio.create_task(read())
    await asyncio.wait_for(first_event.wait(), 10)
    await session.close()
    await asyncio.wait_for(reader, HANG_SECONDS)
    assert time.monotonic() - started < HANG_SECONDS
    assert cli_pids() == []
    assert all(isinstance(e, TextDelta) for e in events)
    after = await turn(session, "anyone there?")
    assert isinstance(after[0], AgentError) and after[0].kind == "internal"
