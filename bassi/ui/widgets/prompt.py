"""The input line: history on Up/Down, completion of commands, tool names, prompts and
``@`` resources on Tab."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Input, Static

from bassi.core.tools import ToolInfo
from bassi.ui.completion import InputSuggester, Offers, completions


class PromptInput(Input):
    """``history`` is the project's history list, appended to elsewhere (it is persisted by
    the project state); this widget only walks it, keeping the unsent draft at the end."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous input", show=False),
        Binding("down", "history(1)", "Next input", show=False),
        Binding("tab", "complete", "Complete", show=False),
    ]
    SUBMIT_KEYS = ("enter", "ctrl+j")
    """ctrl+j: an Enter typed ahead while the terminal was not yet in raw mode (bassi
    starting) arrives as a newline."""

    def __init__(
        self,
        history: Sequence[str],
        tools: Callable[[], Iterable[ToolInfo]],
        pinned: Callable[[], Iterable[ToolInfo]],
        *,
        offers: Callable[[], Offers] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            placeholder="Message bassi, or /help",
            suggester=InputSuggester(tools, pinned, offers),
            select_on_focus=False,
            id=id,
        )
        self.history = history
        self._tools = tools
        self._pinned = pinned
        self._offers = offers
        self._position = len(history)
        self._draft = ""

    def completions(self) -> list[str]:
        offers = self._offers() if self._offers is not None else None
        return completions(self.value, self._tools(), self._pinned(), offers)

    def action_complete(self) -> None:
        """Tab never leaves the line: without a completion it does nothing."""
        found = self.completions()
        if found:
            self.value = found[0]
            self.cursor_position = len(self.value)

    async def _on_key(self, event: events.Key) -> None:
        """Enter is handled here, in order with the characters around it. As a binding it
        would first bubble up to the app, while the characters typed after it (in one
        burst) are already inserted: lines typed ahead would merge."""
        if event.key in self.SUBMIT_KEYS:
            event.stop()
            event.prevent_default()
            await self.action_submit()
            return
        await super()._on_key(event)

    async def action_submit(self) -> None:
        """The line is taken and cleared at once, so what is typed next starts a new line."""
        line = self.value
        if not line.strip():
            return
        self.value = ""
        self.post_message(self.Submitted(self, line))

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._position >= len(self.history):
            self._draft = self.value
        self._position = max(0, min(len(self.history), self._position + step))
        at_end = self._position >= len(self.history)
        self.value = self._draft if at_end else self.history[self._position]
        self.cursor_position = len(self.value)

    def rewind(self) -> None:
        """After a line is sent: start walking from the newest entry again."""
        self._position = len(self.history)
        self._draft = ""


class CompletionHint(Static):
    """The candidates for what is typed, under the input, so a person sees the choices."""

    def show_for(self, candidates: list[str]) -> None:
        self.display = bool(candidates)
        self.update(Content("   ").join(Content(c.strip()) for c in candidates))
