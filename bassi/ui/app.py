"""The bassi application: one chat screen over one ``Runtime``.

The runtime is handed in rather than built here, so tests run the real app over a runtime
they configured (servers, project directory, scripted model), and the app owns only the
screen. It does own the runtime's end: closing the app closes the agent session and every
server process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from bassi.core.log_file import log_to_file
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings
from bassi.core.tools import ToolInfo
from bassi.ui.palette import ToolsProvider
from bassi.ui.screens.chat import ChatScreen


class BassiApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "bassi"
    COMMANDS = App.COMMANDS | {ToolsProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+p", "command_palette", "Find tools", show=False, priority=True),
    ]

    def __init__(self, runtime: Runtime, *, warnings: Sequence[str] = ()) -> None:
        """``warnings``: problems met before the app started (no log file), shown first."""
        super().__init__()
        self.runtime = runtime
        self.warnings = list(warnings)

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
        await self.runtime.close()


def run_app(settings: Settings) -> int:
    warnings = []
    try:
        log_to_file(settings.state_dir)
    except OSError as exc:
        warnings.append(
            f"no log file this run: cannot write in {settings.state_dir} ({exc.strerror or exc})"
        )
    app = BassiApp(Runtime(settings), warnings=warnings)
    return app.run() or 0
