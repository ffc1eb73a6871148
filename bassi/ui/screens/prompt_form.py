"""The arguments of an MCP prompt, asked for in a small form when the slash command did not
give them all: one input per argument, required ones marked, Enter sends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from bassi.core.offers import PromptInfo
from bassi.ui.safe import plain, plain_line


class PromptFormScreen(ModalScreen[dict[str, str] | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, prompt: PromptInfo, given: Mapping[str, str]) -> None:
        super().__init__(classes="prompt-form-screen")
        self.prompt = prompt
        self.given = dict(given)
        self.inputs: dict[str, Input] = {}

    def compose(self) -> ComposeResult:
        with Vertical(classes="prompt-form") as dialog:
            dialog.border_title = Content(f"/{self.prompt.command}")
            if self.prompt.description:
                yield Static(plain(self.prompt.description, "$foreground-muted", max_chars=600))
            for argument in self.prompt.arguments:
                label = argument.name + (" *" if argument.required else "")
                yield Static(plain_line(label, 80, "bold"), classes="prompt-form-label")
                if argument.description:
                    yield Static(plain(argument.description, "$foreground-muted", max_chars=300))
                field = Input(value=self.given.get(argument.name, ""), id=f"arg-{len(self.inputs)}")
                self.inputs[argument.name] = field
                yield field
            with Horizontal(classes="prompt-form-buttons"):
                yield Button("Send", id="send", variant="primary")
                yield Button("Cancel [esc]", id="cancel")
            yield Static(classes="prompt-form-problem")

    def on_mount(self) -> None:
        empty = next((i for i in self.inputs.values() if not i.value), None)
        (empty or self.query_one("#send", Button)).focus()

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#send")
    @on(Input.Submitted)
    def send(self) -> None:
        values = {n: i.value.strip() for n, i in self.inputs.items() if i.value.strip()}
        missing = [a.name for a in self.prompt.arguments if a.required and a.name not in values]
        if missing:
            self.query_one(".prompt-form-problem", Static).update(
                Content.styled(f"Required: {', '.join(missing)}", "$text-error")
            )
            return
        self.dismiss(values)
