"""The MCP client features as a person meets them in the app: ``/mcp``, prompts as slash
commands, ``@`` resources, a server asking for input, progress, structured results and an
interrupted call. Real servers; the chats drive the real CLI against the scripted model."""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest
from textual.widgets import DataTable, Input

from bassi.core.connection_thread import ThreadedConnection
from bassi.core.registry import ServerStatus
from bassi.core.settings import ToolsMode
from bassi.ui.app import BassiApp
from bassi.ui.screens.elicitation import ElicitationScreen
from bassi.ui.screens.prompt_form import PromptFormScreen
from bassi.ui.screens.servers import ServerManagerScreen
from bassi.ui.widgets.messages import Notice
from bassi.ui.widgets.prompt import PromptInput
from bassi.ui.widgets.tool_call import ToolCallBlock
from tests.discovery_fixtures import stdio_entry
from tests.oauth_fixtures import secure_server
from tests.scripted_model import ScriptedModel, reply, text, tool_call
from tests.ui.conftest import AppFactory, notes_entry, python_first, write_servers
from tests.ui.helpers import read_dialog, screen_text, submit, wait_for

BIG = (140, 60)


@pytest.fixture
def chat_env(agent_env: Mapping[str, str]) -> dict[str, str]:
    return python_first(agent_env)


def with_features(project: Path, record: Path | None = None, **more: Any) -> None:
    args = ("--record", str(record)) if record else ()
    write_servers(
        project,
        {"notes": notes_entry(), "feat": stdio_entry("features_server.py", *args), **more},
    )


async def ready(app: BassiApp) -> None:
    assert await app.runtime.catalog.wait_ready(30)


def manager(app: BassiApp) -> ServerManagerScreen:
    screen = app.screen
    assert isinstance(screen, ServerManagerScreen)
    return screen


async def select(pilot: Any, app: BassiApp, server: str) -> None:
    table = manager(app).query_one(DataTable)
    row = table.get_row_index(server)
    table.move_cursor(row=row)
    await pilot.pause()


async def test_mcp_lists_servers_and_reconnects_disables_and_enables(
    make_app: AppFactory, project: Path
) -> None:
    with_features(project, broken={"command": "bassi-test-no-such-command"})
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        await submit(pilot, "/mcp")
        shown = screen_text(app)
        for row in ("notes", "feat", "broken", "scratch"):
            assert row in shown
        assert "needs sign-in" not in shown
        await select(pilot, app, "broken")
        assert "command not found: bassi-test-no-such-command" in screen_text(app)

        # Kill the notes server behind bassi's back; reconnect brings it back.
        await select(pilot, app, "notes")
        connection = app.runtime.catalog.connection("notes")
        assert isinstance(connection, ThreadedConnection)
        process = connection.inner._process
        assert process is not None
        os.killpg(process._process.pid, signal.SIGKILL)
        registry = app.runtime.catalog.registry
        await wait_for(pilot, lambda: registry.server("notes").status is ServerStatus.FAILED)
        await pilot.press("r")
        await wait_for(pilot, lambda: registry.server("notes").status is ServerStatus.CONNECTED)
        await wait_for(pilot, lambda: "notes: connected." in screen_text(app))

        await pilot.press("d")
        await wait_for(pilot, lambda: registry.server("notes").status is ServerStatus.DISABLED)
        assert registry.server("notes").tools == ()
        assert not any(h.tool.server == "notes" for h in app.runtime.search("note"))
        assert app.runtime.catalog.memory.disabled == set()
        await pilot.press("E")
        await wait_for(pilot, lambda: registry.server("notes").status is ServerStatus.CONNECTED)

        await select(pilot, app, "feat")
        await pilot.press("D")
        await wait_for(pilot, lambda: registry.server("feat").status is ServerStatus.DISABLED)
        assert app.runtime.catalog.memory.disabled == {"feat"}
        await pilot.press("escape")

    again = make_app()
    async with again.run_test(size=BIG):
        await ready(again)
        assert again.runtime.catalog.registry.server("feat").status is ServerStatus.DISABLED


async def test_mcp_signs_in_to_a_server_that_needs_it(make_app: AppFactory, project: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with secure_server() as secure:
            write_servers(project, {"secure": {"type": "http", "url": secure.url}})
            app = make_app()
            opened: list[str] = []

            def browser(url: str) -> None:
                opened.append(url)
                httpx2.get(url, follow_redirects=True, timeout=30)

            async with app.run_test(size=BIG) as pilot:
                await ready(app)
                registry = app.runtime.catalog.registry
                assert registry.server("secure").status is ServerStatus.NEEDS_AUTH
                assert "needs sign-in" in screen_text(app)
                app.chat.open_url = browser
                await submit(pilot, "/mcp")
                await select(pilot, app, "secure")
                assert "Needs sign-in: press s to sign in." in screen_text(app)
                await pilot.press("s")
                await wait_for(
                    pilot, lambda: registry.server("secure").status is ServerStatus.CONNECTED
                )
                await wait_for(pilot, lambda: "Signed in to secure" in screen_text(app))
                assert len(opened) == 1
                await pilot.press("o")
                await wait_for(
                    pilot, lambda: registry.server("secure").status is ServerStatus.NEEDS_AUTH
                )


async def test_a_prompt_is_a_slash_command_with_a_form_for_its_arguments(
    scripted_model: ScriptedModel, make_app: AppFactory, project: Path, chat_env: dict[str, str]
) -> None:
    with_features(project)
    scripted_model.script(text("Hello Ann!"), text("Hi Bo."))
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        prompt = app.screen.query_one(PromptInput)
        prompt.value = "/mcp__f"
        assert "/mcp__feat__greet " in prompt.completions()
        await submit(pilot, "/help")
        assert "/mcp__feat__greet <name> [style]" in screen_text(app)

        await submit(pilot, "/mcp__feat__greet Ann style=short")
        await wait_for(pilot, lambda: "Hello Ann!" in screen_text(app), 60)
        await wait_for(pilot, lambda: not app.chat.streaming)
        first = scripted_model.turn_requests[0].last_user_text()
        assert first.endswith("Write a short greeting for Ann.")

        await submit(pilot, "/mcp__feat__greet")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptFormScreen))
        form = app.screen
        assert isinstance(form, PromptFormScreen)
        form.inputs["name"].value = "Bo"
        form.inputs["name"].focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Hi Bo." in screen_text(app), 60)
        assert (
            scripted_model.turn_requests[1]
            .last_user_text()
            .endswith("Write a warm greeting for Bo.")
        )


async def test_an_at_resource_is_completed_and_attached(
    scripted_model: ScriptedModel, make_app: AppFactory, project: Path, chat_env: dict[str, str]
) -> None:
    with_features(project)
    scripted_model.script(text("You need milk."))
    app = make_app(env=chat_env)
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        prompt = app.screen.query_one(PromptInput)
        prompt.value = "what is in @feat:no"
        assert prompt.completions() == [
            "what is in @feat:notes://day/",
            "what is in @feat:notes://today",
        ]
        await submit(pilot, "what is in @feat:notes://today?")
        await wait_for(pilot, lambda: "You need milk." in screen_text(app), 60)
        sent = scripted_model.turn_requests[0].last_user_text()
        assert '<resource server="feat" uri="notes://today">\nBuy milk. Call Ann.\n</resource>' in (
            sent
        )
        notices = [str(n.render()) for n in app.screen.query(Notice)]
        assert "Attached @feat:notes://today." in notices


async def test_a_server_asking_for_input_gets_a_modal_and_progress_and_tables_show(
    scripted_model: ScriptedModel, make_app: AppFactory, project: Path, chat_env: dict[str, str]
) -> None:
    with_features(project)
    scripted_model.script(
        reply(tool_call("mcp__feat__book_room", {})),
        reply(tool_call("mcp__feat__count_slowly", {"n": 3, "pause": 0.6})),
        reply(tool_call("mcp__feat__readings", {}), tool_call("mcp__feat__picture", {})),
        text("All done."),
    )
    app = make_app(env=chat_env, allow=("mcp__feat",))
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        await submit(pilot, "book me a room")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitationScreen), 60)
        await read_dialog(pilot)
        modal = app.screen
        assert isinstance(modal, ElicitationScreen)
        shown = screen_text(app)
        assert "Who is travelling, and for how many nights?" in shown
        assert "feat" in shown
        name, nights = modal.fields["name"], modal.fields["nights"]
        assert isinstance(name, Input) and isinstance(nights, Input)
        name.focus()
        await pilot.press(*"Ann")  # once it has been read, a burst of keys fills the form
        nights.value = "2"
        await pilot.click("#accept")
        await wait_for(pilot, lambda: "booked 2 night(s) for Ann" in screen_text(app), 60)

        def progress_shown() -> bool:
            return any("counted" in b.progress for b in app.screen.query(ToolCallBlock))

        await wait_for(pilot, progress_shown, 60, "progress in the tool-call block")
        await wait_for(pilot, lambda: "All done." in screen_text(app), 60)
        shown = screen_text(app)
        assert "city  celsius" in shown
        assert "Rome  19" in shown
        assert "▣ image (image/png, 100 B)" in shown


async def test_interrupting_a_turn_cancels_the_running_call_on_its_server(
    scripted_model: ScriptedModel,
    make_app: AppFactory,
    project: Path,
    chat_env: dict[str, str],
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.txt"
    with_features(project, record)
    scripted_model.script(reply(tool_call("mcp__feat__wait_forever", {})), text("Stopped."))
    app = make_app(env=chat_env, allow=("mcp__feat",))
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        await submit(pilot, "wait for me")
        await wait_for(pilot, lambda: record.exists() and "waiting" in record.read_text(), 60)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cancelled" in record.read_text(), 30)
        await wait_for(pilot, lambda: not app.chat.streaming, 30)


async def test_list_changes_and_disabling_reach_the_models_view(
    scripted_model: ScriptedModel, make_app: AppFactory, project: Path, chat_env: dict[str, str]
) -> None:
    with_features(project)
    scripted_model.script(
        reply(tool_call("mcp__feat__grow", {})), text("Grown."), text("Seen."), text("Gone.")
    )
    app = make_app(env=chat_env, allow=("mcp__feat",), tools_mode=ToolsMode.ALL)
    async with app.run_test(size=BIG) as pilot:
        await ready(app)
        await submit(pilot, "grow")
        await wait_for(pilot, lambda: "Grown." in screen_text(app), 60)
        await wait_for(pilot, lambda: not app.chat.streaming)
        await submit(pilot, "what now?")
        await wait_for(pilot, lambda: "Seen." in screen_text(app), 60)
        await wait_for(pilot, lambda: not app.chat.streaming)
        assert "mcp__feat__fresh_tool" in scripted_model.turn_requests[-1].tool_names

        await submit(pilot, "/mcp")
        await select(pilot, app, "feat")
        await pilot.press("d")
        registry = app.runtime.catalog.registry
        await wait_for(pilot, lambda: registry.server("feat").status is ServerStatus.DISABLED)
        await pilot.press("escape")
        await submit(pilot, "and now?")
        await wait_for(pilot, lambda: "Gone." in screen_text(app), 60)
        names = scripted_model.turn_requests[-1].tool_names
        assert not any(n.startswith("mcp__feat__") for n in names)
        assert "mcp__notes__add_note" in names
