"""An earlier conversation read back for display: what the user typed, what the agent said and
did; none of what the CLI adds to its transcript."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import SessionMessage

from bassi.core.events import TextDelta, ToolCallFinished, ToolCallStarted
from bassi.core.history import (
    HistoryUnavailable,
    UserText,
    history_items,
    last_exchanges,
    load_history,
)
from bassi.core.session import recent_sessions
from bassi.core.settings import Settings
from tests.transcripts import SESSION, transcript_lines, write_transcript


def user(content: Any) -> SessionMessage:
    return SessionMessage("user", str(uuid.uuid4()), SESSION, {"role": "user", "content": content})


def assistant(*blocks: dict[str, Any], model: str = "claude-sonnet-4-5") -> SessionMessage:
    body = {"role": "assistant", "model": model, "content": list(blocks)}
    return SessionMessage("assistant", str(uuid.uuid4()), SESSION, body)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


REMINDER = "<system-reminder>\nToday's date is 2026-11-21.\n</system-reminder>"

TRANSCRIPT = [
    user([text_block(REMINDER), text_block("remember to buy milk")]),
    assistant({"type": "thinking", "thinking": "hmm", "signature": "x"}),
    assistant(text_block("Here **is**")),
    assistant(text_block("the plan.")),
    assistant(
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "mcp__notes__add_note",
            "input": {"text": "milk"},
        }
    ),
    user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [text_block("added note 1"), {"type": "image", "source": {}}],
            }
        ]
    ),
    assistant(text_block("API Error: 529 overloaded"), model="<synthetic>"),
    user("[Request interrupted by user]"),
    user("<local-command-stdout>cleared</local-command-stdout>"),
    user([{"type": "tool_result", "tool_use_id": "toolu_2", "content": "no", "is_error": True}]),
    user(f"{REMINDER}\nand again"),
    assistant(text_block("Second answer.")),
]


def test_a_transcript_becomes_what_the_user_saw() -> None:
    assert list(history_items(TRANSCRIPT)) == [
        UserText("remember to buy milk"),
        TextDelta("Here **is**\n\nthe plan."),
        ToolCallStarted("toolu_1", "mcp__notes__add_note", "notes", "add_note", {"text": "milk"}),
        ToolCallFinished("toolu_1", "added note 1\n[image]", False),
        ToolCallFinished("toolu_2", "no", True),
        UserText("and again"),
        TextDelta("Second answer."),
    ]


def test_only_the_last_exchanges_are_kept_and_the_rest_is_counted() -> None:
    items = []
    for n in range(25):
        items += [UserText(f"question {n}"), TextDelta(f"answer {n}")]
    history = last_exchanges(items, 20)
    assert history.items[0] == UserText("question 5")
    assert len(history.items) == 40
    assert (history.messages, history.hidden_messages) == (50, 10)

    short = last_exchanges(items[:6], 20)
    assert (len(short.items), short.messages, short.hidden_messages) == (6, 6, 0)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    project = tmp_path / "project"
    project.mkdir()
    return Settings(project_dir=project, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")})


def test_a_transcript_on_disk_is_read_through_the_cli_config_dir(settings: Settings) -> None:
    reply = {"role": "assistant", "model": "m", "content": [text_block("Hi!")]}
    write_transcript(
        settings, transcript_lines([{"role": "user", "content": "hello there"}, reply])
    )
    assert [s.session_id for s in recent_sessions(settings)] == [SESSION]

    history = load_history(settings, SESSION)
    assert history.items == [UserText("hello there"), TextDelta("Hi!")]


def test_a_missing_or_damaged_transcript_says_so(settings: Settings) -> None:
    with pytest.raises(HistoryUnavailable, match="missing or holds no readable messages"):
        load_history(settings, SESSION)

    question = transcript_lines([{"role": "user", "content": "hello there"}])
    path = write_transcript(settings, [*question, b"\xff\xfe not utf-8"])
    with pytest.raises(HistoryUnavailable, match=r"could not be read .*decode"):
        load_history(settings, SESSION)

    path.write_bytes(b"{not json\n[1, 2]\n")
    with pytest.raises(HistoryUnavailable, match="missing or holds no readable messages"):
        load_history(settings, SESSION)
