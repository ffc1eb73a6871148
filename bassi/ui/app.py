"""The bassi application: one chat screen over one ``Runtime``.

The runtime is handed in rather than built here, so tests run the real app over a runtime
they configured (servers, project directory, scripted model), and the app owns only the
screen. It does own the runtime's end: closing the app closes the agent session and every
server process, also when bassi is told to stop by a signal (SIGTERM, SIGHUP, SIGINT): the app
then exits the normal way, so the terminal gets its screen and modes back and no server is
left behind, and the exit status says which signal it was (128 + its number).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.screen import Screen

from bassi.core import foreground
from bassi.core.log_file import log_to_file
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.core.tools import ToolInfo
from bassi.ui.palette import ToolsProvider
from bassi.ui.screens.chat import ChatScreen

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class BassiApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "bassi"
    COMMANDS = App.COMMANDS | {ToolsProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+p", "command_palette", "Find tools", show=False, priority=True),
    ]

    def __init__(
        self,
        runtime: Runtime,
        *,
        warnings: Sequence[str] = (),
        signals: Sequence[int] = (),
    ) -> None:
        """``warnings``: problems met before the app started (no log file), shown first.
        ``signals``: stop signals that arrived before the app could handle them (the caller
        records them while it sets up); the app stops as soon as it runs."""
        super().__init__()
        self.runtime = runtime
        self.warnings = list(warnings)
        self._early_signals = signals
        self.stopped_by: signal.Signals | None = None
        """The signal that stopped the app, if one did."""

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        foreground.attach(loop)
        for number in STOP_SIGNALS:
            loop.add_signal_handler(number, self.stop, number)
        if self._early_signals:
            self.stop(self._early_signals[0])

    def stop(self, number: int) -> None:
        """Exit as if the user quit, reporting the signal. Not at once: the chat screen may
        still be mounting, and exiting under it would fail its set-up."""
        if self.stopped_by is None:
            self.stopped_by = signal.Signals(number)
        self.call_after_refresh(self.exit, 128 + self.stopped_by)

    def action_command_palette(self) -> None:
        """The palette searches tools first; the placeholder says so."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(
                CommandPalette(id="--command-palette", placeholder="Search tools by what they do…")
            )

    def get_default_screen(self) -> Screen[None]:
        return ChatScreen(self.runtime, warnings=self.warnings)

    @property
    def chat(self) -> ChatScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, ChatScreen)
        return screen

    def open_card(self, tool: ToolInfo) -> None:
        self.chat.open_card(tool)

    async def on_unmount(self) -> None:
        try:
            await self.runtime.close()
        finally:
            foreground.detach(asyncio.get_running_loop())


def run_app(settings: Settings) -> int:
    early: list[int] = []

    def remember(number: int, _frame: object) -> None:
        early.append(number)

    # Until the app handles them itself (on mount), stop signals are remembered and acted on
    # then; Ctrl+C still interrupts the setup below at once (the caller says so).
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, remember)
    warnings = []
    try:
        log_to_file(settings.state_dir)
    except OSError as exc:
        warnings.append(
            f"no log file this run: cannot write in {settings.state_dir} ({exc.strerror or exc})"
        )
    app = BassiApp(Runtime(settings), warnings=warnings, signals=early)
    signal.signal(signal.SIGINT, remember)
    result = app.run()
    if app.stopped_by is not None:
        what = (
            "interrupted"
            if app.stopped_by is signal.SIGINT
            else f"stopped by {app.stopped_by.name}"
        )
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            print(f"bassi: {what}; the servers were shut down.", file=sys.stderr, flush=True)
        return 128 + app.stopped_by
    return result or 0
