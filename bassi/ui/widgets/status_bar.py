"""One line under the input: model, session tokens and cost, tools exposed/pinned, servers."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from bassi.core.registry import ServerEntry, ServerStatus


def tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


class StatusBar(Widget):
    model: reactive[str] = reactive("")
    session_tokens: reactive[int] = reactive(0)
    cost_usd: reactive[float] = reactive(0.0)
    exposed: reactive[int] = reactive(0)
    pinned: reactive[int] = reactive(0)
    mode: reactive[str] = reactive("")
    servers: reactive[tuple[ServerEntry, ...]] = reactive(tuple, always_update=True)
    streaming: reactive[bool] = reactive(False)

    def show_servers(self, entries: Sequence[ServerEntry]) -> None:
        self.servers = tuple(entries)

    def render(self) -> Content:
        """The full line when it fits, else a compact one: every figure stays visible at
        80 columns."""
        full = self._line(compact=False)
        return full if full.cell_length <= self.size.width - 2 else self._line(compact=True)

    def _line(self, *, compact: bool) -> Content:
        muted = "$text-muted"
        sep = Content.styled(" │ " if compact else " · ", muted)
        tools = (
            f"{self.exposed} tools, {self.pinned} pinned"
            if compact
            else f"tools {self.exposed} exposed, {self.pinned} pinned"
        )
        mode = Content.styled(f" ({self.mode})", muted) if self.mode and not compact else Content()
        parts = [
            Content.styled(self.model, "bold"),
            Content(
                f"{tokens(self.session_tokens)} tok"
                if compact
                else f"{tokens(self.session_tokens)} tokens"
            ),
            Content(f"${self.cost_usd:.4f}"),
            Content(tools) + mode,
            self._health(),
        ]
        line = sep.join(parts)
        if self.streaming:
            line = (
                Content.styled(
                    "● esc stops │ " if compact else "● replying, esc interrupts · ",
                    "$text-warning",
                )
                + line
            )
        return line

    def _health(self) -> Content:
        entries = self.servers
        if not entries:
            return Content.styled("no servers", "$text-muted")
        up = sum(e.status is ServerStatus.CONNECTED for e in entries)
        failed = sum(e.status is ServerStatus.FAILED for e in entries)
        waiting = sum(e.status is ServerStatus.CONNECTING for e in entries)
        style = "$text-error" if failed else "$text-warning" if waiting else "$text-success"
        health = Content.styled(f"servers {up}/{len(entries)}", style)
        if failed:
            health += Content.styled(f" ({failed} failed)", "$text-error")
        elif waiting:
            health += Content.styled(f" ({waiting} connecting)", "$text-warning")
        return health
