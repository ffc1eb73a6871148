"""The whole app over a real runtime: real in-process and stdio servers, the real index and
state files. No API key here: everything in this file works without a model."""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from bassi.core.grants import Grants
from bassi.core.log_file import log_to_file
from bassi.core.settings import Settings
from bassi.ui.app import BassiApp
from bassi.ui.screens.tool_card import ToolCardScreen
from bassi.ui.widgets.catalog import CatalogView
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.messages import Notice, UserMessage
from bassi.ui.widgets.prompt import CompletionHint, PromptInput
from bassi.ui.widgets.reply import AssistantMessage
from bassi.ui.widgets.search_results import SearchResults
from bassi.ui.widgets.tool_call import ToolCallBlock
from bassi.ui.widgets.tool_card import ToolCard
from tests.conftest import HANG_SECONDS
from tests.transcripts import transcript_lines, write_transcript
from tests.ui.conftest import AppFactory, notes_entry, write_servers
from tests.ui.helpers import screen_text, styles_of, submit, wait_for

BIG = (120, 120)
"""A terminal tall enough that the whole log of a test is on screen at once."""
HOSTILE_SERVER = Path(__file__).parent / "servers" / "hostile_server.py"


@asynccontextmanager
async def settled(app: BassiApp) -> AsyncIterator[Pilot[int]]:
    """The app running on a BIG terminal once every server has connected or failed (the app
    itself never waits for this)."""
    async with app.run_test(size=BIG) as pilot:
        await wait_for(pilot, lambda: app.runtime.catalog.registry.servers(), what="servers")
        await app.runtime.catalog.wait_ready(20)
        await pilot.pause()
        yield pilot


def pins(project: Path) -> list[str]:
    """The project's pins, as stored in the user's own bassi directory (and nowhere in the
    project: ``.bassi/state.json`` never holds one)."""
    assert not (project / ".bassi" / "state.json").exists()
    return Grants.load(Settings(project_dir=project, env=dict(os.environ))).pins


async def test_catalog_shows_at_once_slow_server_fills_in_failed_shows_reason(
    project: Path, make_app: AppFactory
) -> None:
    gate = project / "notes-may-start"
    write_servers(
        project,
        {
            "notes": notes_entry("--gate", str(gate)),
            "broken": {"command": "bassi-test-no-such-command", "args": ["--serve"]},
        },
    )
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        registry = app.runtime.catalog.registry
        await wait_for(pilot, lambda: "broken" in screen_text(app), what="catalog")
        text = screen_text(app)
        assert text.index("scratch") < text.index("notes") < text.index("broken")
        assert "in-process" in text
        assert "python notes_server.py --gate" in text
        notes_line = next(line for line in text.splitlines() if " notes " in line)
        assert "connecting" in notes_line

        await wait_for(pilot, lambda: "command not found" in screen_text(app), what="failure")
        text = screen_text(app)
        assert "failed" in text
        assert "command not found: bassi-test-no-such-command" in text
        assert "add_note" not in text

        gate.touch()
        await wait_for(pilot, lambda: registry.server("notes").available, what="notes up")
        await pilot.pause()
        text = screen_text(app)
        notes_line = next(line for line in text.splitlines() if " notes " in line)
        assert "4 tools" in notes_line and "connecting" not in notes_line
        assert "add_note, list_notes, search_notes, delete_note" in text
        assert "6 tools available on 3 servers · 2 connected · 1 failed" in text


async def test_tools_shows_the_catalog_again_current(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools")
        assert len(app.screen.query(CatalogView)) == 2
        assert screen_text(app).count("6 tools available on 3 servers") == 2


async def test_help_lists_every_command_and_key(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/help")
        text = screen_text(app)
        for usage in ("/tools search <query>", "/tool <name>", "/tool unpin <name>", "/resume"):
            assert usage in text
        assert "ctrl+p" in text


async def test_command_errors_are_explained_in_the_log(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tols")
        await submit(pilot, "/tool")
        await submit(pilot, "/tool no_such_tool_at_all")
        await submit(pilot, "/tool add_nte")
        await submit(pilot, "/tool unpin list_notes")
        text = screen_text(app)
        assert "Unknown command /tols. Did you mean /tools" in text
        assert "/tool needs an argument: /tool <name>" in text
        assert "No tool named 'no_such_tool_at_all'" in text
        assert "No tool named 'add_nte'. Closest:" in text
        assert "/tool notes/add_note" in text
        assert "notes/list_notes is not pinned" in text
        assert app.is_running


async def test_search_table_row_opens_card_and_card_pins(
    project: Path, make_app: AppFactory
) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools search add a note")
        table = app.screen.query_one(SearchResults)
        assert table.hits[0].tool.ref == "notes/add_note"
        assert table.has_focus
        text = screen_text(app)
        assert "notes/add_note" not in text  # the table shows tool and server in columns
        assert "add_note" in text and "Add a note to the note book." in text

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolCardScreen), what="card")
        card = app.screen.query_one(ToolCard)
        assert card.tool.ref == "notes/add_note"
        text = screen_text(app)
        assert "mcp__notes__add_note" in text
        assert "not pinned" in text
        assert "text" in text and "string" in text and '"general"' in text

        await pilot.press("p")
        assert "pinned: the agent may use it" in screen_text(app)
        assert pins(project) == ["mcp__notes__add_note"]
        await pilot.press("escape")
        assert not isinstance(app.screen, ToolCardScreen)

        # Back at the table, typing goes straight to the input line.
        assert table.has_focus
        await pilot.press("h", "i")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.has_focus and prompt.value == "hi"


async def test_search_shows_comparable_scores_and_explains_a_rank(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools search add a note")
        table = app.screen.query_one(SearchResults)
        scores = [hit.score for hit in table.hits]
        assert all(0 < score <= 1 for score in scores)
        assert f"{scores[0]:.2f}" in screen_text(app)
        assert any(hit.weak for hit in table.hits) == ("weak" in screen_text(app))
        await pilot.press("x")
        await wait_for(pilot, lambda: "#1 notes/add_note: score" in screen_text(app), what="why")
        assert "words: covers" in screen_text(app) and "meaning:" in screen_text(app)


async def test_fielded_search_filters_and_a_bad_filter_is_a_clear_message(
    make_app: AppFactory,
) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools search name:*note* NOT list")
        table = app.screen.query_one(SearchResults)
        refs = {hit.tool.ref for hit in table.hits}
        assert refs == {"notes/add_note", "notes/search_notes", "notes/delete_note"}
        await submit(pilot, "/tools search readonly:maybe")
        assert "Cannot search: readonly: takes yes or no, not 'maybe'" in screen_text(app)
        await submit(pilot, '/tools search delete the note "Groceries for Sunday"')
        assert app.screen.query(SearchResults).last().hits[0].tool.ref == "notes/delete_note"
        assert 'no tool fits "Groceries for Sunday": ranked by the words' in screen_text(app)


async def test_a_search_while_a_server_connects_says_so(
    project: Path, make_app: AppFactory
) -> None:
    gate = project / "notes-may-start"
    write_servers(project, {"notes": notes_entry("--gate", str(gate))})
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        # bassi's own server is indexed once the search engine has loaded (after the first
        # screen); then only notes is missing from the index.
        catalog = app.runtime.catalog
        await wait_for(pilot, lambda: catalog.waiting() == ["notes"], what="the other servers")
        await submit(pilot, "/tools search delete a note")
        assert "(notes still connecting: more tools may match soon)" in screen_text(app)
        gate.touch()
        assert await app.runtime.catalog.wait_ready(20)
        await submit(pilot, "/tools search delete a note")
        assert app.screen.query(SearchResults).last().hits[0].tool.ref == "notes/delete_note"


async def test_empty_search_says_so_and_suggests_a_broader_query(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools search zzqqxx")
        text = screen_text(app)
        assert "No tools match 'zzqqxx'. Try a broader query: fewer words" in text
        assert "/tools lists every tool" in text
        assert not app.screen.query(SearchResults)


async def test_tool_pins_and_unpin_persist_across_restarts(
    project: Path, make_app: AppFactory
) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tool search_notes")
        card = app.screen.query_one(ToolCard)
        assert card.tool.ref == "notes/search_notes" and card.pinned
        assert "pinned: the agent may use it" in screen_text(app)
        await submit(pilot, "/tool mcp__scratch__scratch_read")
    assert pins(project) == ["mcp__notes__search_notes", "mcp__scratch__scratch_read"]

    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tools pinned")
        text = screen_text(app)
        assert "Pinned tools (2)" in text
        assert "notes/search_notes" in text and "scratch/scratch_read" in text
        await submit(pilot, "/tool unpin notes/search_notes")
        assert "Unpinned notes/search_notes." in screen_text(app)

    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/tools pinned")
        text = screen_text(app)
        assert "Pinned tools (1)" in text
        assert "search_notes" not in text.split("Pinned tools (1)")[1]


async def test_ambiguous_name_lists_the_candidates(project: Path, make_app: AppFactory) -> None:
    write_servers(project, {"notes": notes_entry(), "notes2": notes_entry()})
    app = make_app()
    async with settled(app) as pilot:
        await submit(pilot, "/tool add_note")
        text = screen_text(app)
        assert "'add_note' matches several tools; say which one:" in text
        assert "/tool notes/add_note" in text and "/tool notes2/add_note" in text
        assert pins(project) == []


async def test_history_persists_across_restarts(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/cost")
        await submit(pilot, "/tools pinned")

    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press("up")
        assert prompt.value == "/tools pinned"
        await pilot.press("up")
        assert prompt.value == "/cost"
        await pilot.press("down", "down")
        assert prompt.value == ""


async def test_autocomplete_offers_commands_and_tool_names(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/tools")
        hint = app.screen.query_one(CompletionHint)
        assert hint.display
        assert "/tools search" in screen_text(app) and "/tools pinned" in screen_text(app)
        await pilot.press(*" s", "tab")
        assert prompt.value == "/tools search "
        prompt.value = ""
        await pilot.press(*"/tool sea", "tab")
        assert prompt.value == "/tool search_notes"
        await pilot.press("enter")
        assert app.screen.query_one(ToolCard).tool.ref == "notes/search_notes"
        assert not hint.display


async def test_palette_searches_tools_and_opens_the_card(make_app: AppFactory) -> None:
    app = make_app()
    async with settled(app) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"delete a note")
        await wait_for(pilot, lambda: "notes/delete_note" in screen_text(app), what="palette hit")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolCardScreen), what="card")
        assert app.screen.query_one(ToolCard).tool.ref == "notes/delete_note"


async def test_cost_clear_and_quit(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/cost")
        cost = " ".join(screen_text(app).split("This session:")[-1].split())
        assert "turns 0 input tokens 0 output tokens 0 cache read tokens 0" in cost
        assert "cache write tokens 0 all tokens 0 cost $0.0000" in cost
        await submit(pilot, "/clear")
        (only,) = app.screen.query_one(ChatLog).children
        assert isinstance(only, Notice) and "New conversation" in str(only.content)
        await submit(pilot, "/quit")
        await pilot.pause()
    assert app.return_value == 0


async def test_without_api_key_a_message_gets_a_how_to_fix(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "hello there")
        await wait_for(pilot, lambda: "ANTHROPIC_API_KEY" in screen_text(app), what="hint")
        assert "hello there" in screen_text(app)
        await app.runtime.catalog.wait_ready(HANG_SECONDS)  # the notes server is up
        await submit(pilot, "/tools search note")
        assert app.screen.query(SearchResults)


async def test_hostile_server_is_shown_inert(project: Path, make_app: AppFactory) -> None:
    write_servers(project, {"hostile": {"command": sys.executable, "args": [str(HOSTILE_SERVER)]}})
    app = make_app()
    async with settled(app) as pilot:
        assert "markup, escapes, huge" in screen_text(app)  # the catalog

        await submit(pilot, "/tool hostile/markup")
        text = screen_text(app)
        assert (
            "[bold red]Click[/bold red] [@click=app.quit]here[/] [link=http://x]now[/link]" in text
        )
        assert "q[red]" in text and "red [blink]x[/blink]" in text
        for style in styles_of(app, "Click"):
            assert style.color is None or style.color.name != "red"
            assert style.meta.get("@click") is None
        await pilot.click(
            offset=(
                30,
                text.splitlines().index(
                    next(line for line in text.splitlines() if "[@click=app.quit]here" in line)
                ),
            )
        )
        assert app.is_running

        await submit(pilot, "/tool escapes")
        text = screen_text(app)
        assert "Clears the screen and rings the bell" in text
        assert "\x1b" not in text and "\x07" not in text

        await submit(pilot, "/clear")
        await submit(pilot, "/tool huge")
        text = screen_text(app)
        assert "more characters]" in text  # the megabyte is cut, and says so
        assert text.count("blah") < 1_000


async def test_log_follows_output_unless_scrolled_up_and_sending_returns_to_the_bottom(
    make_app: AppFactory,
) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(8):
            await submit(pilot, "/help")
        log = app.screen.query_one(ChatLog)
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y

        await pilot.press("pageup")
        scrolled_to = log.scroll_y
        assert scrolled_to < log.max_scroll_y
        # Output nobody asked for just now (a reply streaming on) leaves the view alone ...
        await log.add(Notice("a server connected"))
        await pilot.pause()
        assert log.scroll_y == scrolled_to
        assert "a server connected" not in screen_text(app)

        # ... but whatever the user sends brings the log back to the end, to its answer.
        await submit(pilot, "/cost")
        await pilot.pause()
        assert log.scroll_y == log.max_scroll_y
        assert "This session:" in screen_text(app)
        await log.add(Notice("following again"))
        await pilot.pause()
        assert "following again" in screen_text(app)


async def test_config_problems_show_as_warnings_and_the_rest_loads(
    project: Path, make_app: AppFactory
) -> None:
    write_servers(project, {"notes": notes_entry(), "nocommand": {"args": ["x"]}})
    app = make_app()
    async with settled(app):
        text = screen_text(app)
        problem = next(line for line in text.splitlines() if "⚠" in line)
        assert "nocommand" in problem
        assert "4 tools" in text  # notes still loaded


async def test_the_catalog_masks_what_the_config_took_from_the_environment(
    project: Path, make_app: AppFactory, offline_env: dict[str, str]
) -> None:
    gate = project / "gate-tok-5f2e9c1d"
    gate.mkdir()
    write_servers(
        project,
        {
            "notes": notes_entry("--gate", "${NOTES_GATE}"),
            "broken": {"command": "${NOTES_GATE}/bin/server"},
        },
    )
    app = make_app(env={**offline_env, "NOTES_GATE": str(gate)})
    async with settled(app):
        text = screen_text(app)
        assert "python notes_server.py --gate ${NOTES_GATE}" in text
        assert "command not found: ${NOTES_GATE}/bin/server" in text
        assert "tok-5f2e9c1d" not in text
        assert app.runtime.catalog.registry.server("notes").available


@pytest.mark.parametrize("fault", ["full disk", "file named .bassi"])
async def test_state_that_cannot_be_saved_costs_a_warning_not_the_app(
    project: Path, make_app: AppFactory, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    why = "the disk is full" if fault == "full disk" else "is not a directory"
    if fault == "file named .bassi":
        (project / ".bassi").write_text("in the way")
    app = make_app()
    async with settled(app) as pilot:
        if fault == "full disk":  # from now on: the project was approved before
            monkeypatch.setattr("bassi.core.json_store.os.fsync", full)
        await submit(pilot, "/cost")
        await wait_for(pilot, lambda: why in screen_text(app), what="the warning")
        await submit(pilot, "/tool search_notes")
        await submit(pilot, "/tools pinned")
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press("up", "up")
        assert prompt.value == "/tool search_notes"  # history kept in memory
        text = screen_text(app)
        assert "Pinned tools (1)" in text
        assert text.count(why) == 1  # said once, not at every Enter
        assert "kept until bassi exits" in text


def test_every_slash_command_has_a_handler_on_the_chat_screen() -> None:
    from bassi.ui.commands import COMMANDS
    from bassi.ui.screens.chat import ChatScreen

    for command in COMMANDS:
        assert callable(getattr(ChatScreen, command.handler, None)), command.text


HOSTILE_TEXT = "[bold red]Click[/bold red] [@click=app.quit]here[/] \x1b[31mred\x1b[0m\x07"


async def test_continue_shows_the_last_exchanges_of_a_long_conversation_inert(
    make_app: AppFactory,
) -> None:
    """A resumed conversation is shown through the same safe path as a live one: its text
    comes from the model and from servers."""
    messages: list[dict[str, Any]] = []
    for n in range(21):
        messages += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": [{"type": "text", "text": f"answer **{n}**"}]},
        ]
    call = {"type": "tool_use", "id": "toolu_1", "name": "mcp__notes__add_note"}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True}
    messages += [
        {"role": "user", "content": HOSTILE_TEXT},
        {"role": "assistant", "content": [call | {"input": {"text": HOSTILE_TEXT}}]},
        {"role": "user", "content": [result | {"content": HOSTILE_TEXT}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"said {HOSTILE_TEXT}"}]},
    ]
    app = make_app(continue_session=True)
    write_transcript(app.runtime.settings, transcript_lines(messages))
    async with app.run_test(size=BIG) as pilot:
        await wait_for(pilot, lambda: app.screen.query(ToolCallBlock), what="the replay")
        await pilot.pause()
        notice = next(
            str(n.content) for n in app.screen.query(Notice) if "Resumed" in str(n.content)
        )
        assert notice.endswith(
            ", 44 earlier messages."
            " Showing the last 20 exchanges; 4 earlier messages are not shown."
        )
        users = [str(m.content) for m in app.screen.query(UserMessage)]
        assert users[0] == "question 2" and len(users) == 20
        answers = [m.source for m in app.screen.query(AssistantMessage)]
        assert answers[0] == "answer **2**" and len(answers) == 20

        text = screen_text(app)
        assert "answer 20" in text  # Markdown, rendered
        shown = "[bold red]Click[/bold red] [@click=app.quit]here[/] red"
        assert text.count(shown) == 3  # user message, tool result, reply
        assert "\\u001b[31mred" in text  # the arguments, as JSON
        assert "\x1b" not in text and "\x07" not in text
        for style in styles_of(app, "Click"):
            assert style.color is None or style.color.name != "red"
            assert style.meta.get("@click") is None
        block = app.screen.query_one(ToolCallBlock)
        assert (block.tool, block.server, block.is_error) == ("add_note", "notes", True)


async def test_continue_without_an_earlier_conversation_says_so(make_app: AppFactory) -> None:
    app = make_app(continue_session=True)
    async with app.run_test(size=BIG) as pilot:
        await wait_for(pilot, lambda: "No earlier conversation" in screen_text(app))
        assert "this is a new one." in screen_text(app)
        assert not app.screen.query(UserMessage)


@pytest.mark.usefixtures("restore_logging")
async def test_the_log_file_holds_server_stderr_failures_and_bassis_own_lines(
    project: Path, make_app: AppFactory
) -> None:
    """``.bassi/bassi.log`` is where to look when a server fails: its stderr, why it failed,
    what connected."""
    speaks = "import sys; sys.stderr.write('loading config\\nboom: no token set\\n'); sys.exit(3)"
    write_servers(
        project,
        {
            "notes": notes_entry(),
            "talker": {"command": "python", "args": ["-c", speaks]},
            "broken": {"command": "bassi-test-no-such-command"},
        },
    )
    app = make_app()
    log = log_to_file(app.runtime.settings.state_dir)
    async with settled(app):
        pass
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log.read_text()
    assert "bassi.server.talker: boom: no token set" in text
    assert "WARNING bassi.core.connections: server talker is failed" in text
    assert "server broken is failed: command not found: bassi-test-no-such-command" in text
    assert "INFO bassi.core.connections: server notes is connected" in text
