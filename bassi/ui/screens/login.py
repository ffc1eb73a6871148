"""``/login``: paste an API key for this session, without restarting bassi.

The key is never shown (a password field), never kept in the input history, and never
written anywhere: it lives in the running bassi only. Keeping it is the user's choice, in
their shell's environment.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from bassi.core.credentials import KEYS_PAGE


class LoginScreen(ModalScreen[str | None]):
    """Dismisses with the key, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self) -> None:
        super().__init__(classes="login-screen")

    def compose(self) -> ComposeResult:
        with Vertical(classes="login-dialog") as dialog:
            dialog.border_title = Content("API key for this session")
            yield Static(
                Content(
                    "Paste an Anthropic API key and press Enter. bassi uses it until you quit "
                    "and never saves it; to keep it, set ANTHROPIC_API_KEY before starting "
                    f"bassi. Keys are at {KEYS_PAGE}."
                ),
                classes="login-about",
            )
            yield Input(placeholder="sk-ant-...", password=True, id="api-key")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def chosen(self, event: Input.Submitted) -> None:
        event.stop()
        key = event.value.strip()
        if key:
            self.dismiss(key)
