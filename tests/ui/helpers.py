"""Small helpers for pilot tests: read what the terminal shows, host a single widget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from rich.style import Style
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget

from bassi.ui.screens.guarded import QUIET_SECONDS
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.prompt import PromptInput
from tests.conftest import HANG_SECONDS

APP_CSS = Path(__file__).resolve().parents[2] / "bassi" / "ui" / "app.tcss"


def screen_text(app: App[object]) -> str:
    """The characters currently on screen, one line per row (what a person would read)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)


def styles_of(app: App[object], needle: str) -> list[Style]:
    """The styles of the on-screen segments that contain ``needle``."""
    found = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            if needle in segment.text and segment.style is not None:
                found.append(segment.style)
    return found


class WidgetHost(App[None]):
    """An app with just a chat log holding the widgets under test, styled by bassi's CSS."""

    CSS_PATH = str(APP_CSS)

    def __init__(self, *widgets: Callable[[], Widget]) -> None:
        super().__init__()
        self._factories = widgets

    def compose(self) -> ComposeResult:
        with ChatLog():
            for factory in self._factories:
                yield factory()


async def wait_for(
    pilot: Pilot[object],
    condition: Callable[[], object],
    seconds: float = HANG_SECONDS,
    what: str = "",
) -> None:
    """Let the app run until ``condition()`` is true; fail with ``what`` after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.05)


async def submit(pilot: Pilot[object], line: str) -> None:
    """Put ``line`` in the prompt and press Enter (typing is tested on its own)."""
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.focus()
    prompt.value = line
    await pilot.press("enter")
    await pilot.pause()


async def read_dialog(pilot: Pilot[object]) -> None:
    """Pause as a person reading a dialog would: a key pressed sooner after the dialog
    appeared, or after the key before, is taken as typed ahead (``guarded``)."""
    await pilot.pause(QUIET_SECONDS)
