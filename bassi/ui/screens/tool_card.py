"""A tool's card over the chat, opened from a search result or the command palette."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer

from bassi.core.policy import AccessPolicy
from bassi.core.tools import ToolInfo
from bassi.ui.widgets.tool_card import ToolCard

if TYPE_CHECKING:
    from bassi.core.validation import SchemaChecks


class ToolCardScreen(ModalScreen[None]):
    """``toggle_pin`` pins or unpins the tool and returns whether it is pinned now: the
    screen shows the card, the caller owns the state."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("p", "toggle_pin", "Pin/unpin"),
    ]

    def __init__(
        self,
        tool: ToolInfo,
        policy: AccessPolicy,
        *,
        available: bool,
        toggle_pin: Callable[[ToolInfo], bool],
        schemas: SchemaChecks | None = None,
    ) -> None:
        super().__init__(classes="tool-card-screen")
        self.tool = tool
        self._policy = policy
        self._available = available
        self._toggle_pin = toggle_pin
        self._schemas = schemas

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="tool-card-frame"):
            yield ToolCard(
                self.tool, self._policy, available=self._available, schemas=self._schemas
            )
        yield Footer()

    def action_toggle_pin(self) -> None:
        self.query_one(ToolCard).pinned = self._toggle_pin(self.tool)
