"""The question bassi asks once for a project: may its own servers start, may its rules count?

A directory's ``.mcp.json`` names commands that would run as the user, and its
``.claude/settings*.json`` may allow tools to run without asking. Neither does anything until
the user approves it here (or with ``bassi mcp approve``), so the dialog lists exactly what
would start (each server's command line or URL) and which allow rules would count. Esc keeps
everything as it is: nothing starts; so does Enter, "Not now" having the focus, and keys typed
as the dialog appears are not answers (``guarded``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Static

from bassi.core.permissions import RulesSource
from bassi.core.reveal import reveal
from bassi.core.trust import PendingServer, Standing
from bassi.ui.safe import plain, plain_line
from bassi.ui.screens.guarded import GuardedModal

MUTED = "$foreground-muted"
SHOWN_CHARS = 10_000
"""Of one command line or setting: all of any real one, while a hostile file's megabyte
cannot stall the screen (the cut says how much is not shown)."""


class TrustScreen(GuardedModal[bool]):
    """Dismissed with True when the user approves everything listed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer(True)", "Approve and start"),
        Binding("n,escape", "answer(False)", "Not now"),
    ]

    def __init__(self, servers: Sequence[PendingServer], rules: Sequence[RulesSource]) -> None:
        super().__init__(classes="trust-screen")
        self.servers = list(servers)
        self.rules = list(rules)

    def compose(self) -> ComposeResult:
        with Vertical(classes="trust-dialog guarded-dialog") as dialog:
            dialog.border_title = Content("Approve this project?")
            with VerticalScroll(classes="trust-items"):
                if self.servers:
                    yield Static(
                        "This directory's servers file wants to start these servers. They "
                        "would run as you, with your files and network. bassi starts none of "
                        "them until you approve:",
                        classes="trust-intro",
                    )
                    for server in self.servers:
                        yield Static(self._server_line(server), classes="trust-server")
                for source in self.rules:
                    yield Static(
                        Content("Its ")
                        + plain_line(source.name, 100, "bold")
                        + Content(" lets these tools run without asking:"),
                        classes="trust-intro",
                    )
                    for rule in source.allow:
                        yield Static(plain_line(reveal(rule.pattern), 200), classes="trust-rule")
            with Horizontal(classes="trust-buttons"):
                yield Button(Content("Approve and start [a]"), id="approve", variant="warning")
                yield Button(Content("Not now [n]"), id="not-now", variant="primary")
        yield Footer()

    @staticmethod
    def _server_line(server: PendingServer) -> Content:
        standing = (
            Content.styled("changed since you approved it", "$text-error")
            if server.standing is Standing.CHANGED
            else Content.styled("new", "$text-warning")
        )
        return Content("").join(
            [
                plain_line(reveal(server.name), 64, "bold"),
                Content("  "),
                standing,
                Content("\n"),
                Content.styled(
                    "  connects to "
                    if server.target.startswith(("http://", "https://"))
                    else "  runs ",
                    MUTED,
                ),
                plain(reveal(server.target), max_chars=SHOWN_CHARS),
                *(
                    Content("\n    ") + plain(reveal(line), max_chars=SHOWN_CHARS)
                    for line in server.details
                ),
            ]
        )

    def on_mount(self) -> None:
        self.query_one("#not-now", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id == "approve")

    def action_answer(self, approve: bool) -> None:
        self.dismiss(approve)
