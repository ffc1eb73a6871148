"""One line under the input: model, session tokens and cost, tools exposed/pinned, servers;
while a turn runs, how long it has run and whether the model has gone quiet."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from bassi.core.registry import ServerEntry, ServerStatus

STALL_SECONDS = 20
"""After this long without a word from the model, the bar says so, and that Esc stops it."""


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
    elapsed: reactive[int] = reactive(0)
    """Seconds the current turn has run."""
    quiet: reactive[int] = reactive(0)
    """Seconds since the turn last showed a sign of life."""
    running_tool: reactive[str] = reactive("")
    """The tool call the turn waits for, if any."""

    def show_servers(self, entries: Sequence[ServerEntry]) -> None:
        self.servers = tuple(entries)

    def render(self) -> Content:
        """The full line when it fits, else shorter wordings: every figure stays visible at
        80 columns."""
        room = self.size.width - 2
        for compact in (False, True):
            line = self._line(compact=compact, model=self.model)
            if line.cell_length <= room:
                return line
        return self._line(compact=True, model=self.model.removeprefix("claude-"))

    def _line(self, *, compact: bool, model: str) -> Content:
        muted = "$foreground-muted"
        sep = Content.styled(" │ " if compact else " · ", muted)
        count = tokens(self.session_tokens)
        parts = [
            Content.styled(model, "bold"),
            Content(f"{count} tok" if compact else f"{count} tokens"),
            Content(f"${self.cost_usd:.4f}"),
            Content(f"tools {self.exposed}, pinned {self.pinned}")
            if compact
            else Content(f"tools {self.exposed} exposed, {self.pinned} pinned")
            + (Content.styled(f" ({self.mode})", muted) if self.mode else Content()),
            self._health(compact),
        ]
        line = sep.join(parts)
        if self.streaming:
            line = self._busy(compact) + sep + line
        return line

    def _busy(self, compact: bool) -> Content:
        if self.running_tool:
            what = "tool" if compact else f"running {self.running_tool}"
            return Content.styled(f"● {what} {self.elapsed} s · esc stops", "$text-warning")
        if self.quiet >= STALL_SECONDS:
            said = (
                f"● no answer for {self.quiet} s · esc stops"
                if compact
                else f"● the model has not answered for {self.quiet} s · esc stops it"
            )
            return Content.styled(said, "$text-error bold")
        said = "esc stops" if compact else "esc interrupts"
        return Content.styled(f"● replying {self.elapsed} s · {said}", "$text-warning")

    def _health(self, compact: bool) -> Content:
        entries = self.servers
        if not entries:
            return Content.styled("no servers", "$foreground-muted")
        up = sum(e.status is ServerStatus.CONNECTED for e in entries)
        failed = sum(e.status is ServerStatus.FAILED for e in entries)
        waiting = sum(e.status.starting for e in entries)
        pending = sum(e.status is ServerStatus.PENDING for e in entries)
        sign_in = sum(e.status is ServerStatus.NEEDS_AUTH for e in entries)
        style = (
            "$text-error"
            if failed
            else "$text-warning"
            if waiting or pending or sign_in
            else "$text-success"
        )
        health = Content.styled(f"servers {up}/{len(entries)}", style)
        if pending:
            health += Content.styled(
                f", {pending} unapproved" if compact else f" ({pending} waiting for approval)",
                "$text-warning",
            )
        if failed:
            health += Content.styled(
                f", {failed} failed" if compact else f" ({failed} failed)", "$text-error"
            )
        elif waiting:
            health += Content.styled(
                f", {waiting} starting" if compact else f" ({waiting} connecting)", "$text-warning"
            )
        if sign_in:
            health += Content.styled(
                f", {sign_in} sign-in" if compact else f" ({sign_in} need sign-in: /mcp)",
                "$text-warning",
            )
        return health
