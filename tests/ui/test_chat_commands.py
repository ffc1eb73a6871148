"""The input line and the commands as a person types them (no model needed): echoes, typing
ahead, Tab, completion of the model's tool names, the palette, /login's secrecy."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.command import CommandInput, CommandPalette

from bassi.ui.screens.login import LoginScreen
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.messages import CommandEcho, Notice
from bassi.ui.widgets.prompt import PromptInput
from tests.ui.conftest import AppFactory
from tests.ui.helpers import screen_text, submit, wait_for

BIG = (120, 60)


def log_lines(app: object) -> list[str]:
    """Each block of the chat log as one string, in order."""
    from bassi.ui.app import BassiApp

    assert isinstance(app, BassiApp)
    out = []
    for widget in app.screen.query_one(ChatLog).children:
        if isinstance(widget, CommandEcho | Notice):
            out.append(str(widget.content))
        else:
            out.append(type(widget).__name__)
    return out


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


async def test_commands_are_echoed_above_their_output(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/tools pinned")
        await submit(pilot, "/tols")
        lines = log_lines(app)
        echo = lines.index("/tools pinned")
        assert lines[echo + 1].startswith("No tools pinned")
        assert lines[lines.index("/tols") + 1].startswith("Unknown command /tols")


async def test_lines_typed_ahead_in_one_burst_run_one_by_one(make_app: AppFactory) -> None:
    """Keys that arrive together (typed while bassi was busy or starting) keep their line
    breaks: an Enter typed before the terminal was in raw mode arrives as ctrl+j."""
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        burst = [*"/cost", "ctrl+j", *"/tools pinned", "enter", *"/he"]
        driver = app._driver
        assert driver is not None
        for key in burst:  # sent without waiting, as a burst from the terminal is read
            char = key if len(key) == 1 else {"enter": "\r", "ctrl+j": "\n"}[key]
            event = events.Key(key, char)
            event.set_sender(app)
            driver.send_message(event)
        await wait_for(pilot, lambda: "/tools pinned" in log_lines(app), what="second line")
        lines = log_lines(app)
        assert lines.index("/cost") < lines.index("/tools pinned")
        assert not any("Unknown command" in line for line in lines)
        assert prompt.value == "/he"  # what was typed after the last Enter is kept


async def test_tab_without_a_completion_stays_in_the_input(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"hello", "tab")
        assert prompt.has_focus and prompt.value == "hello"


async def test_the_models_tool_names_complete_too(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        prompt = app.screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/tool mcp__notes__se", "tab")
        assert prompt.value == "/tool mcp__notes__search_notes"


async def test_the_palette_says_it_searches_tools(make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        placeholder = str(app.screen.query_one(CommandInput).placeholder)
        assert "tools" in placeholder.lower() and "commands" not in placeholder.lower()


async def test_pinned_descriptions_cut_with_an_ellipsis(
    project: Path, make_app: AppFactory
) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        long = "word " * 60
        tool = app.runtime.resolve("notes/add_note")
        app.runtime.pin(tool)
        object.__setattr__(tool, "description", long)
        await submit(pilot, "/tools pinned")
        text = " ".join(screen_text(app).split())
        assert "word word…" in text


async def test_login_key_is_hidden_and_never_kept(project: Path, make_app: AppFactory) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await submit(pilot, "/login")
        await wait_for(pilot, lambda: isinstance(app.screen, LoginScreen), what="dialog")
        await pilot.press(*"sk-ant-secret-123", "enter")
        await wait_for(pilot, lambda: "not saved anywhere" in screen_text(app), what="notice")
        await submit(pilot, "/login sk-ant-pasted-456")
        await pilot.pause()
        text = screen_text(app)
        assert "secret-123" not in text and "pasted-456" not in text
        assert app.runtime._api_key == "sk-ant-secret-123"
    saved = every_byte_under(project)
    assert b"secret-123" not in saved and b"pasted-456" not in saved
