"""The question bassi asks before the agent runs a tool the user has not allowed.

People must see exactly what would run before any choice: which server (and how it is
reached), which tool (its name with every invisible character written out, so a look-alike
cannot pass for the real one), what it declares about itself, why bassi asks (a definition
that changed since the user allowed it is said here), anything in its description that
talks to the model, and the whole call, every argument complete, in a scrollable view where
line breaks, tabs, long runs of blanks and control characters are visible. Nothing is cut.
Every choice has a key, shown in the footer; Esc denies, the safe default, and Deny has the
focus. Keys typed as the dialog appears are not answers (``guarded``).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Static

from bassi.core.hints import Hints
from bassi.core.injection import tool_flags
from bassi.core.reveal import reveal, reveal_value
from bassi.core.runtime import ApprovalDecision, ApprovalRequest
from bassi.core.tools import Origin
from bassi.ui.safe import plain, plain_line
from bassi.ui.screens.guarded import GuardedModal
from bassi.ui.wording import counted

MUTED = "$foreground-muted"


def _line(label: str, value: Content) -> Content:
    return Content.styled(f"{label}: ", MUTED) + value


class ApprovalScreen(GuardedModal[ApprovalDecision]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('allow_once')", "Allow once"),
        Binding("t", "decide('always_tool')", "Always this tool"),
        Binding("s", "decide('always_server')", "Always this server"),
        Binding("d,escape", "decide('deny')", "Deny"),
    ]

    def __init__(self, request: ApprovalRequest, *, server_target: str = "") -> None:
        super().__init__(classes="approval-screen")
        self.request = request
        self.server_target = server_target

    def compose(self) -> ComposeResult:
        tool = self.request.tool
        with Vertical(classes="approval-dialog guarded-dialog") as dialog:
            dialog.border_title = Content("Allow this tool call?")
            yield Static(
                Content("").join(
                    [
                        Content("The agent wants to run "),
                        plain_line(reveal(tool.name), 160, "bold"),
                        Content(" on server "),
                        plain_line(reveal(tool.server), 80, "bold $text-warning"),
                    ]
                ),
                classes="approval-what",
            )
            where = "in-process (part of bassi)" if tool.origin is Origin.IN_PROCESS else ""
            yield Static(
                _line("called as", plain_line(self.request.called, 200))
                + Content.styled("  ·  ", MUTED)
                + _line("server", plain_line(self.server_target or where, 200)),
                classes="approval-target",
            )
            yield Static(self._why(), classes="approval-why")
            hints = Hints.of(tool)
            declares = ", ".join(hints.labels()) or "nothing (no annotations)"
            if hints.title:
                declares += f"; title “{reveal(hints.title)}”"
            yield Static(_line("declares", plain_line(declares, 300)), classes="approval-hints")
            for flag in tool_flags(tool):
                yield Static(
                    Content.styled("⚠ its description ", "$text-error")
                    + plain_line(str(flag), 300, "$text-error"),
                    classes="approval-flag",
                )
            if tool.summary:
                yield Static(plain_line(tool.summary, 300, MUTED), classes="approval-summary")
            arguments = self.request.arguments
            shown = reveal_value(arguments)
            yield Static(
                Content.styled(
                    f"Arguments ({counted(len(arguments), 'key')}, "
                    f"{counted(len(shown), 'character')} as shown), complete:",
                    MUTED,
                ),
                classes="approval-arguments-title",
            )
            with VerticalScroll(classes="approval-arguments"):
                yield Static(plain(shown), classes="approval-arguments-text")
            with Horizontal(classes="approval-buttons"):
                yield Button(Content("Allow once [a]"), id="allow_once", variant="primary")
                yield Button(Content("Always this tool [t]"), id="always_tool")
                yield Button(Content("Always this server [s]"), id="always_server")
                yield Button(Content("Deny [d]"), id="deny", variant="error")
        yield Footer()

    def _why(self) -> Content:
        decision = self.request.decision
        why = plain_line(decision.reason, 300)
        if decision.changed:
            return _line("why it asks", why.stylize("bold $text-error"))
        return _line("why it asks", why)

    def on_mount(self) -> None:
        # Enter on the focused button is the answer least worth regretting.
        self.query_one("#deny", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(ApprovalDecision(choice))
