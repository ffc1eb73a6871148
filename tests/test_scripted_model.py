"""The scripted model speaks the Messages API the way the CLI expects, and records requests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import HANG_SECONDS
from tests.scripted_model import (
    AUX_MODEL,
    AUX_REPLY_TEXT,
    EXHAUSTED_TEXT,
    RecordedRequest,
    ScriptedModel,
    Step,
    overloaded,
    overloaded_mid_stream,
    rate_limited,
    reply,
    server_error,
    text,
    tool_call,
    unauthorized,
)

TOOLS = [{"name": "mcp__demo__echo", "input_schema": {"type": "object"}}]


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    """A server of its own (not the fixture): these tests provoke script failures on purpose."""
    with ScriptedModel() as server:
        yield server


def turn_body(user_text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": True,
        "system": [{"type": "text", "text": "You are bassi."}],
        "tools": TOOLS,
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text}]}],
    } | extra


def post_stream(model: ScriptedModel, body: dict[str, Any]) -> tuple[int, list[tuple[str, Any]]]:
    """POST and parse the SSE answer into (event name, data) pairs."""
    url = model.base_url + "/v1/messages?beta=true"
    with httpx.stream("POST", url, json=body, timeout=10) as response:
        if response.headers["content-type"] != "text/event-stream":
            response.read()
            return response.status_code, [("json", response.json())]
        events = []
        for frame in response.read().decode().split("\n\n"):
            if not frame.strip():
                continue
            lines = dict(line.split(": ", 1) for line in frame.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
        return response.status_code, events


def names(events: list[tuple[str, Any]]) -> list[str]:
    return [name for name, _ in events]


def test_text_turn_streams_several_deltas_in_standard_framing(model: ScriptedModel) -> None:
    model.script(text("Hello from the script", chunks=4))
    status, events = post_stream(model, turn_body())
    assert status == 200
    assert names(events) == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * 4,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert all(d["type"] == "text_delta" for d in deltas)
    assert "".join(d["text"] for d in deltas) == "Hello from the script"
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["model"] == "claude-sonnet-4-5"
    assert start["usage"]["input_tokens"] == 25
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "end_turn"
    assert final["usage"]["output_tokens"] == 12


def test_tool_calls_arrive_as_one_input_json_delta_each(model: ScriptedModel) -> None:
    model.script(
        reply(
            "Let me look.",
            tool_call("mcp__demo__echo", {"text": "one"}),
            tool_call("mcp__demo__echo", {"text": "two"}, id="toolu_fixed"),
        )
    )
    _, events = post_stream(model, turn_body())
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use", "tool_use"]
    assert starts[1]["name"] == "mcp__demo__echo" and starts[1]["id"].startswith("toolu_")
    assert starts[2]["id"] == "toolu_fixed"
    json_deltas = [
        (d["index"], json.loads(d["delta"]["partial_json"]))
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
    ]
    assert json_deltas == [(1, {"text": "one"}), (2, {"text": "two"})]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


@pytest.mark.parametrize(
    ("step", "status", "error_type"),
    [
        (unauthorized(), 401, "authentication_error"),
        (rate_limited(), 429, "rate_limit_error"),
        (server_error(), 500, "api_error"),
        (overloaded(), 529, "overloaded_error"),
    ],
)
def test_http_faults_carry_the_anthropic_error_body(
    model: ScriptedModel, step: Step, status: int, error_type: str
) -> None:
    model.script(step)
    got_status, events = post_stream(model, turn_body())
    assert got_status == status
    assert events == [("json", {"type": "error", "error": {"type": error_type, "message": ANY}})]


class _Any:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and bool(other)


ANY: Any = _Any()


def test_rate_limit_answer_says_when_to_retry(model: ScriptedModel) -> None:
    model.script(rate_limited())
    response = httpx.post(model.base_url + "/v1/messages", json=turn_body())
    assert response.headers["retry-after"] == "1"


def test_overloaded_mid_stream_is_an_error_event_after_the_text(model: ScriptedModel) -> None:
    model.script(overloaded_mid_stream("Half an ans"))
    status, events = post_stream(model, turn_body())
    assert status == 200
    assert names(events) == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "error",
    ]
    assert events[-1][1] == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_non_streamed_turn_gets_a_json_message(model: ScriptedModel) -> None:
    """The CLI's fallback after a broken stream is the same turn, not streamed."""
    model.script(reply("Plain", tool_call("mcp__demo__echo", {"x": 1})), overloaded_mid_stream())
    response = httpx.post(model.base_url + "/v1/messages", json=turn_body(stream=False))
    message = response.json()
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]
    assert message["content"][1]["input"] == {"x": 1}
    assert message["stop_reason"] == "tool_use"
    response = httpx.post(model.base_url + "/v1/messages", json=turn_body(stream=False))
    assert response.status_code == 529
    assert response.json()["error"]["type"] == "overloaded_error"


def test_every_request_is_recorded_with_what_the_model_saw(model: ScriptedModel) -> None:
    model.script(text("first"), text("second"))
    post_stream(model, turn_body("question one"))
    body = turn_body("question two")
    body["messages"].append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": [{"type": "text", "text": "tool said hi"}],
                }
            ],
        }
    )
    post_stream(model, body)
    first, second = model.turn_requests
    assert first.path == "/v1/messages?beta=true"
    assert first.tool_names == ["mcp__demo__echo"]
    assert first.system_text == "You are bassi."
    assert first.model == "claude-sonnet-4-5"
    assert first.last_user_text() == "question one"
    assert second.tool_result_text("toolu_a") == "tool said hi"
    assert [r.step for r in model.turn_requests] == [text("first"), text("second")]


def test_count_tokens_and_helper_queries_do_not_consume_the_script(model: ScriptedModel) -> None:
    model.script(text("the real answer"))
    small = httpx.post(
        model.base_url + "/v1/messages/count_tokens", json={"messages": [], "tools": []}
    ).json()
    big = httpx.post(
        model.base_url + "/v1/messages/count_tokens", json={"messages": [], "tools": TOOLS * 50}
    ).json()
    assert 0 < small["input_tokens"] < big["input_tokens"]
    _, helper = post_stream(model, turn_body(model=AUX_MODEL))
    quota = httpx.post(model.base_url + "/v1/messages", json=turn_body(max_tokens=1, stream=False))
    assert quota.json()["content"][0]["text"] == AUX_REPLY_TEXT
    assert "".join(d["delta"].get("text", "") for n, d in helper if n == "content_block_delta") == (
        AUX_REPLY_TEXT
    )
    _, events = post_stream(model, turn_body())
    assert "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta") == (
        "the real answer"
    )
    kinds = [r.kind for r in model.requests]
    assert kinds == ["count_tokens", "count_tokens", "aux", "aux", "turn"]
    assert model.failures == []


def test_callable_step_reacts_to_the_request(model: ScriptedModel) -> None:
    def echo_back(request: RecordedRequest) -> Step:
        return text("you said: " + request.last_user_text())

    model.script(echo_back)
    _, events = post_stream(model, turn_body("ping"))
    assert "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta") == (
        "you said: ping"
    )


def test_running_out_of_script_is_visible(model: ScriptedModel) -> None:
    def broken(request: RecordedRequest) -> Step:
        raise ValueError("bad step")

    model.script(broken)
    for _ in range(2):
        _, events = post_stream(model, turn_body("unexpected"))
    streamed = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert streamed == EXHAUSTED_TEXT
    assert len(model.failures) == 2
    assert "bad step" in model.failures[0]
    assert "exhausted" in model.failures[1] and "unexpected" in model.failures[1]


def test_slow_stream_is_slow_and_close_ends_it_promptly(model: ScriptedModel) -> None:
    model.script(text("a b c d e f g h", chunks=8, delay=0.2), text("x" * 10, chunks=10, delay=5))
    started = time.monotonic()
    post_stream(model, turn_body())
    assert time.monotonic() - started >= 0.2 * 10

    errors: list[BaseException] = []

    def read_forever() -> None:
        try:
            post_stream(model, turn_body())
        except httpx.HTTPError as exc:
            errors.append(exc)

    reader = threading.Thread(target=read_forever)
    reader.start()
    model.wait_for_turn_requests(2)
    started = time.monotonic()
    model.close()
    reader.join(timeout=HANG_SECONDS)
    assert not reader.is_alive()
    assert time.monotonic() - started < HANG_SECONDS  # the stream had 50 s to go


def test_a_client_that_hangs_up_mid_stream_does_not_break_the_server(model: ScriptedModel) -> None:
    model.script(text("slow " * 20, chunks=20, delay=0.1), text("next one"))
    url = model.base_url + "/v1/messages"
    with httpx.stream("POST", url, json=turn_body(), timeout=10) as response:
        next(response.iter_bytes())
    _, events = post_stream(model, turn_body())
    assert "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta") == (
        "next one"
    )
