"""Chatting through the app: the real bundled CLI against the scripted model, real servers.

These start the CLI, so each takes a few seconds; they cover what only a real turn shows:
streamed Markdown, tool-call blocks with results, approval, interrupt, resume, continue.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown, Static
from textual.widgets._markdown import MarkdownFence

from bassi.core.settings import ToolsMode
from bassi.ui.app import BassiApp
from bassi.ui.screens.approval import ApprovalScreen
from bassi.ui.screens.login import LoginScreen
from bassi.ui.screens.resume import ResumeScreen
from bassi.ui.widgets import status_bar
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.messages import Notice, UserMessage
from bassi.ui.widgets.reply import AssistantMessage
from bassi.ui.widgets.status_bar import StatusBar
from bassi.ui.widgets.tool_call import ToolCallBlock
from tests.conftest import HANG_SECONDS
from tests.scripted_model import ScriptedModel, Text, reply, text, tool_call, unauthorized
from tests.ui.conftest import AppFactory, notes_entry, python_first, write_servers
from tests.ui.helpers import read_dialog, screen_text, submit, wait_for

BIG = (120, 100)
WIDE = (200, 60)
"""Wide enough for the status bar's full wording."""
ANSWER = "Here is **bold** advice and code:\n\n```python\nprint('hi')\n```\n"


@pytest.fixture
def chat_env(agent_env: Mapping[str, str]) -> dict[str, str]:
    return python_first(agent_env)


async def turn_done(pilot: Pilot[object], app: BassiApp, last_words: str) -> None:
    """Until the reply ending with ``last_words`` is shown and the turn is over."""

    def done() -> bool:
        return last_words in screen_text(app) and not app.chat.streaming

    await wait_for(pilot, done, 60, repr(last_words))
    await pilot.pause()


async def test_reply_streams_as_markdown_and_tool_call_shows_its_result(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(
        reply(
            Text(ANSWER, chunks=6),
            tool_call("mcp__notes__add_note", {"text": "buy milk"}),
            input_tokens=30,
            output_tokens=20,
            cache_read_input_tokens=3000,
            cache_creation_input_tokens=400,
        ),
        text("Added it to your notes."),
    )
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        await submit(pilot, "/tool notes/add_note")  # pinned: runs without asking
        await submit(pilot, "remember to buy milk")
        await turn_done(pilot, app, "Added it to your notes.")

        messages = list(app.screen.query(AssistantMessage))
        assert len(messages) == 2  # before and after the tool call
        assert "Here is **bold** advice" in messages[0].source
        fence = messages[0].query_one(MarkdownFence)
        assert "print('hi')" in fence.code
        text_on_screen = screen_text(app)
        assert "Here is bold advice and code:" in text_on_screen  # rendered, not raw
        assert text_on_screen.count("Here is bold advice") == 1  # shown once, not re-printed
        assert text_on_screen.count("Added it to your notes.") == 1

        block = app.screen.query_one(ToolCallBlock)
        assert (block.tool, block.server) == ("add_note", "notes")
        assert not block.is_error
        assert 'text="buy milk"' in text_on_screen
        assert "added note 1 [general]" in text_on_screen
        log_children = list(app.screen.query_one("#chat-log").children)
        assert log_children.index(messages[0]) < log_children.index(block)
        assert log_children.index(block) < log_children.index(messages[1])

        bar = app.screen.query_one(StatusBar)
        assert bar.session_tokens == 30 + 25 + 20 + 12 + 3000 + 400  # cache counts too
        assert "3,487 tokens" in screen_text(app)
        await submit(pilot, "/cost")
        cost = screen_text(app).split("This session:")[-1]
        for row in (
            "turns 1",
            "input tokens 55",
            "output tokens 32",
            "cache read tokens 3,000",
            "cache write tokens 400",
            "all tokens 3,487",
        ):
            assert row in " ".join(cost.split()), row
    assert isinstance(messages[0], Markdown)


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_escape_or_ctrl_c_interrupts_a_streaming_reply(
    key: str, scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(
        text("word " * 200, chunks=200, delay=0.25),  # fifty seconds if left alone
        text("Fresh start."),
    )
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "tell me a long story")
        await wait_for(pilot, lambda: "word word" in screen_text(app), 60, "the reply")
        assert "esc" in screen_text(app).splitlines()[-1].lower()  # the footer offers it
        pressed = time.monotonic()
        await pilot.press(key)
        await wait_for(pilot, lambda: not app.chat.streaming, HANG_SECONDS, "the turn to stop")
        assert time.monotonic() - pressed < HANG_SECONDS
        assert "Interrupted." in screen_text(app)
        shown = screen_text(app).count("word")
        assert shown < 200

        await submit(pilot, "something else")
        await turn_done(pilot, app, "Fresh start.")


async def test_approval_modal_deny_allow_once_and_always(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    """In progressive mode a tool the agent loaded itself needs the user's yes, asked in the
    modal, which shows the server, how it runs, and the arguments."""
    load = tool_call("mcp__bassi__tool_load", {"names": ["notes/search_notes"]})
    call = tool_call("mcp__notes__search_notes", {"word": "milk"})
    load_more = tool_call(
        "mcp__bassi__tool_load", {"names": ["notes/list_notes", "notes/add_note"]}
    )
    scripted_model.script(
        reply(load), reply(call), text("You said no."),
        reply(call), text("Ran once."),
        reply(call), text("Always from now on."),
        reply(call), text("No question this time."),
        reply(load_more), reply(tool_call("mcp__notes__list_notes")), text("Whole server."),
        reply(tool_call("mcp__notes__add_note", {"text": "x"})), text("Server allowed."),
    )  # fmt: skip
    app = make_app(env=chat_env, tools_mode=ToolsMode.PROGRESSIVE)
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        for message, key, answer in (
            ("one", "d", "You said no."),
            ("two", "a", "Ran once."),
            ("three", "t", "Always from now on."),
        ):
            await submit(pilot, message)
            await wait_for(pilot, lambda: "The agent wants" in screen_text(app), 60, "modal")
            assert isinstance(app.screen, ApprovalScreen)
            text_on_screen = screen_text(app)
            assert "The agent wants to run search_notes on server notes" in text_on_screen
            assert "python notes_server.py" in text_on_screen
            assert '"word": "milk"' in text_on_screen
            await read_dialog(pilot)
            await pilot.press(key)
            await turn_done(pilot, app, answer)

        blocks = [b for b in app.screen.query(ToolCallBlock) if b.tool == "search_notes"]
        assert [b.is_error for b in blocks] == [True, False, False]
        assert "declined" in (blocks[0].result or "")
        assert "nothing found" in (blocks[1].result or "")
        assert app.runtime.grants.pins == ["mcp__notes__search_notes"]

        await submit(pilot, "four")
        await turn_done(pilot, app, "No question this time.")
        assert len([b for b in app.screen.query(ToolCallBlock) if b.tool == "search_notes"]) == 4

        await submit(pilot, "five")
        await wait_for(pilot, lambda: "run list_notes" in screen_text(app), 60, "modal")
        await read_dialog(pilot)
        await pilot.press("s")
        await turn_done(pilot, app, "Whole server.")
        assert app.runtime.grants.servers == ["notes"]
        await submit(pilot, "six")
        await turn_done(pilot, app, "Server allowed.")
        added = app.screen.query(ToolCallBlock).last()
        assert added.tool == "add_note" and not added.is_error


def log_blocks(app: BassiApp) -> list[tuple[str, str]]:
    """The conversation blocks in the log, in order, as (kind, what they show)."""
    blocks: list[tuple[str, str]] = []
    for widget in app.screen.query_one(ChatLog).children:
        if isinstance(widget, UserMessage):
            blocks.append(("user", str(widget.content)))
        elif isinstance(widget, AssistantMessage):
            blocks.append(("assistant", widget.source))
        elif isinstance(widget, ToolCallBlock):
            blocks.append(("tool", f"{widget.server}/{widget.tool} -> {widget.result}"))
    return blocks


async def resumed(pilot: Pilot[object], app: BassiApp) -> str:
    """Until the resume notice is shown; returns the screen's text then."""
    await wait_for(pilot, lambda: "Resumed conversation from" in screen_text(app), 20, "resume")
    await pilot.pause()
    return screen_text(app)


FIRST_CONVERSATION = [
    ("user", "remember swordfish"),
    ("assistant", "Noted: **swordfish**."),
    ("tool", 'notes/add_note -> {"result":"added note 1 [general]"}'),
    ("assistant", "Saved it to your notes."),
]


async def test_resume_picker_and_continue_flag_show_the_earlier_conversation(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(
        reply("Noted: **swordfish**.", tool_call("mcp__notes__add_note", {"text": "swordfish"})),
        text("Saved it to your notes."),
        text("Back in the old conversation."),
        text("Continued."),
    )
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        await submit(pilot, "/tool notes/add_note")
        await submit(pilot, "remember swordfish")
        await turn_done(pilot, app, "Saved it to your notes.")

    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), 20, "picker")
        assert "remember swordfish" in screen_text(app)
        await pilot.press("enter")
        shown = await resumed(pilot, app)
        assert ", 3 earlier messages." in shown
        assert log_blocks(app) == FIRST_CONVERSATION
        assert "Noted: swordfish." in shown  # Markdown, rendered
        assert 'text="swordfish"' in shown  # the tool call's arguments
        block = app.screen.query_one(ToolCallBlock)
        assert not block.is_error
        await submit(pilot, "what was it?")
        await turn_done(pilot, app, "Back in the old conversation.")
        assert log_blocks(app)[len(FIRST_CONVERSATION) :] == [
            ("user", "what was it?"),
            ("assistant", "Back in the old conversation."),
        ]
    history = scripted_model.turn_requests[2].messages
    assert any("Saved it to your notes." in str(m["content"]) for m in history)

    app = make_app(env=chat_env, continue_session=True)
    async with app.run_test(size=BIG) as pilot:
        shown = await resumed(pilot, app)
        assert ", 5 earlier messages." in shown
        earlier = [
            *FIRST_CONVERSATION,
            ("user", "what was it?"),
            ("assistant", "Back in the old conversation."),
        ]
        assert log_blocks(app) == earlier
        await submit(pilot, "and now?")
        await turn_done(pilot, app, "Continued.")
        assert log_blocks(app)[len(earlier) :] == [
            ("user", "and now?"),
            ("assistant", "Continued."),
        ]
    history = scripted_model.turn_requests[3].messages
    assert any("Back in the old conversation." in str(m["content"]) for m in history)


async def test_an_unreadable_conversation_is_a_notice_not_a_crash(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(text("Noted."))
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "remember swordfish")
        await turn_done(pilot, app, "Noted.")
    (transcript,) = (Path(chat_env["CLAUDE_CONFIG_DIR"]) / "projects").rglob("*.jsonl")
    data = transcript.read_bytes()
    middle = len(data) // 2
    transcript.write_bytes(data[:middle] + b"\xff\xfe not utf-8 \xc3\x28" + data[middle:])

    app = make_app(env=chat_env, continue_session=True)
    async with app.run_test(size=BIG) as pilot:
        await resumed(pilot, app)
        (notice,) = unreadable(app)
        assert ": remember swordfish. Its messages cannot be shown: its transcript could not " in (
            notice
        )
        assert "can't decode byte 0xff" in notice
        assert log_blocks(app) == []
        await submit(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), 20, "picker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(unreadable(app)) == 2, what="second notice")
        assert app.is_running and log_blocks(app) == []


def unreadable(app: BassiApp) -> list[str]:
    return [
        str(n.content)
        for n in app.screen.query(Notice)
        if "cannot be shown" in str(n.content) and n.has_class("-warning")
    ]


# ------------------------------------------------------------------ what people expect of a chat


async def test_clear_starts_a_new_conversation_and_the_old_one_stays_resumable(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(text("The word is swordfish."), text("Which word?"))
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "remember swordfish")
        await turn_done(pilot, app, "The word is swordfish.")
        bar = app.screen.query_one(StatusBar)
        assert bar.cost_usd > 0
        await submit(pilot, "/clear")
        assert bar.cost_usd == 0 and bar.session_tokens == 0
        assert "swordfish" not in screen_text(app)
        await submit(pilot, "what was the word?")
        await turn_done(pilot, app, "Which word?")
        await submit(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), 20, "picker")
        assert "remember swordfish" in screen_text(app)
    second = scripted_model.turn_requests[1]
    assert "swordfish" not in str(second.messages)  # a new conversation, not the old one
    assert [m["role"] for m in second.messages] == ["user"]


async def test_a_rejected_key_is_reported_in_seconds_and_login_fixes_it_without_restart(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    env = {k: v for k, v in chat_env.items() if k != "CLAUDE_CODE_MAX_RETRIES"}
    scripted_model.script(*[unauthorized()] * 11, text("Now it works."))

    app = make_app(env=env)
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "hello")
        await wait_for(pilot, lambda: "was rejected" in screen_text(app), 60, "the error")
        await wait_for(pilot, lambda: not app.chat.streaming, 20, "the turn to end")
        shown = screen_text(app)
        assert "ANTHROPIC_API_KEY was rejected by the Anthropic API (HTTP 401)" in shown
        assert "/login" in shown
        assert "retrying" not in shown and "site-packages" not in shown
        assert len(scripted_model.turn_requests) <= 2

        scripted_model._steps.clear()
        scripted_model.script(text("Now it works."))
        await submit(pilot, "/login")
        await wait_for(pilot, lambda: isinstance(app.screen, LoginScreen), what="dialog")
        await pilot.press(*"sk-ant-the-right-one", "enter")
        await wait_for(pilot, lambda: "not saved anywhere" in screen_text(app), what="notice")
        await submit(pilot, "hello again")
        await turn_done(pilot, app, "Now it works.")
    last = scripted_model.turn_requests[-1]
    assert last.headers.get("x-api-key", last.headers.get("X-Api-Key")) == "sk-ant-the-right-one"


async def test_a_stalled_stream_shows_the_time_and_that_esc_stops_it(
    scripted_model: ScriptedModel,
    make_app: AppFactory,
    chat_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(status_bar, "STALL_SECONDS", 2)
    scripted_model.script(reply(Text("late words", 2), delay=30))
    app = make_app(env=chat_env)
    async with app.run_test(size=WIDE) as pilot:
        await submit(pilot, "hello")
        await wait_for(pilot, lambda: "replying" in status_line(app), 60, "the busy line")
        assert re.search(r"replying \d+ s", status_line(app))
        await wait_for(pilot, lambda: "has not answered" in status_line(app), 60, "the stall")
        assert re.search(r"the model has not answered for \d+ s · esc stops it", status_line(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.streaming, 20, "the turn to stop")
        assert "Interrupted" in screen_text(app)


def status_line(app: BassiApp) -> str:
    return str(app.screen.query_one(StatusBar).render())


async def test_structured_results_read_as_text_and_long_ones_fold(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    notes = [f"note number {n}" for n in range(1, 11)]
    scripted_model.script(
        reply(*(tool_call("mcp__notes__add_note", {"text": note}) for note in notes)),
        reply(tool_call("mcp__notes__list_notes")),
        text("Those are your notes."),
    )
    app = make_app(env=chat_env, tools_mode=ToolsMode.ALL)
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        for tool in ("notes/add_note", "notes/list_notes"):
            app.runtime.pin(tool)  # they run without asking
        await submit(pilot, "list my notes")
        await turn_done(pilot, app, "Those are your notes.")
        listing = app.screen.query(ToolCallBlock).last()
        assert listing.result is not None and '"result"' in listing.result  # what the CLI gave
        shown = screen_text(app)
        assert "notes/list_notes" in shown  # server and tool on every call
        assert "\\n" not in shown and '{"result"' not in shown
        body = str(listing.query_one(".tool-call-result", Static).content)
        assert body.startswith("note number 1\nnote number 2\n")  # lines, not escaped JSON
        assert "note number 6" in body and "note number 10" not in body  # folded
        assert "4 more lines (ctrl+o or click to expand)" in body
        assert "expand result" in shown.splitlines()[-1].lower()  # the footer offers it
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "note number 10" in str(listing.query_one(".tool-call-result", Static).content)


async def test_interrupting_a_tool_shows_a_short_line_not_the_note_to_the_model(
    project: Path,
    scripted_model: ScriptedModel,
    make_app: AppFactory,
    chat_env: dict[str, str],
) -> None:
    write_servers(project, {"notes": notes_entry("--slow")})
    scripted_model.script(reply(tool_call("mcp__notes__wait", {"seconds": 30})), text("Ok."))
    app = make_app(env=chat_env, tools_mode=ToolsMode.ALL)
    async with app.run_test(size=WIDE) as pilot:
        await app.runtime.catalog.wait_ready(20)
        app.runtime.pin("notes/wait")  # it runs without asking
        await submit(pilot, "wait a while")
        await wait_for(pilot, lambda: "running notes/wait" in status_line(app), 60, "the call")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.streaming, 20, "the turn to stop")
        await pilot.pause()
        shown = screen_text(app)
        assert "interrupted" in shown
        assert "STOP" not in shown and "doesn't want to proceed" not in shown
        block = app.screen.query_one(ToolCallBlock)
        assert block.interrupted and not block.is_error


async def test_sending_a_message_while_scrolled_up_returns_to_the_bottom(
    scripted_model: ScriptedModel, make_app: AppFactory, chat_env: dict[str, str]
) -> None:
    scripted_model.script(text("Here is the answer."))
    app = make_app(env=chat_env)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(6):
            await submit(pilot, "/help")
        log = app.screen.query_one(ChatLog)
        await pilot.press("pageup", "pageup")
        assert log.scroll_y < log.max_scroll_y
        await submit(pilot, "a question")
        await turn_done(pilot, app, "Here is the answer.")
        assert "a question" in screen_text(app)
        assert log.scroll_y == log.max_scroll_y
