"""A server asks the person for input (MCP elicitation): a small form built from the schema
it sent, or a URL it wants opened. The answer (accept with the values, decline, cancel) goes
back to the server as given; Esc cancels, the safe default.

Everything in the request comes from the server, so it is shown as plain text, and the server
is named, so a person knows who is asking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mcp import types
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Input, Select, Static
from textual.widgets.select import NoSelection

from bassi.core.connections import ElicitationRequest
from bassi.ui.safe import plain, plain_line
from bassi.ui.screens.guarded import GuardedModal

FieldWidget = Input | Checkbox | Select[str]


def _choices(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs of an enum field: ``enum`` (+ ``enumNames``) or ``oneOf``."""
    if isinstance(schema.get("enum"), list):
        values = [str(v) for v in schema["enum"]]
        names = schema.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) else values
        return list(zip(labels, values, strict=False))
    options = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(options, list):
        return [
            (str(o.get("title", o["const"])), str(o["const"]))
            for o in options
            if isinstance(o, dict) and "const" in o
        ]
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping):
        return _choices(items)
    return []


class ElicitationScreen(GuardedModal[types.ElicitResult]):
    ANSWERS_ONLY = False  # its form is typed in
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer('cancel')", "Cancel"),
        Binding("ctrl+d", "answer('decline')", "Decline"),
    ]

    def __init__(self, request: ElicitationRequest, open_url: Callable[[str], None]) -> None:
        super().__init__(classes="elicitation-screen")
        self.request = request
        self.open_url = open_url
        self.fields: dict[str, FieldWidget] = {}

    @property
    def schema(self) -> Mapping[str, Any]:
        params = self.request.params
        if isinstance(params, types.ElicitRequestFormParams):
            return params.requested_schema
        return {}

    def compose(self) -> ComposeResult:
        params = self.request.params
        with Vertical(classes="elicitation-dialog guarded-dialog") as dialog:
            dialog.border_title = Content("A server asks for input")
            yield Static(
                Content("Server ") + plain_line(self.request.server, 64, "bold $text-warning"),
                classes="elicitation-server",
            )
            yield Static(plain(params.message, max_chars=2_000), classes="elicitation-message")
            with VerticalScroll(classes="elicitation-fields"):
                if isinstance(params, types.ElicitRequestURLParams):
                    yield Static(
                        Content.styled("It asks you to open: ", "$foreground-muted")
                        + plain_line(params.url, 500),
                        classes="elicitation-url",
                    )
                else:
                    yield from self._form()
            with Horizontal(classes="elicitation-buttons"):
                if isinstance(params, types.ElicitRequestURLParams):
                    yield Button("Open and accept", id="accept", variant="primary")
                else:
                    yield Button("Accept", id="accept", variant="primary")
                yield Button("Decline [ctrl+d]", id="decline")
                yield Button("Cancel [esc]", id="cancel", variant="error")
            yield Static(classes="elicitation-problem")

    def _form(self) -> ComposeResult:
        properties = self.schema.get("properties", {})
        required = set(self.schema.get("required", []))
        for name, field in properties.items() if isinstance(properties, Mapping) else ():
            if not isinstance(field, Mapping):
                continue
            title = str(field.get("title") or name) + (" *" if name in required else "")
            yield Static(plain_line(title, 100, "bold"), classes="elicitation-label")
            if description := field.get("description"):
                yield Static(plain(str(description), "$foreground-muted", max_chars=500))
            default = field.get("default")
            widget: FieldWidget
            if choices := _choices(field):
                widget = Select[str](
                    choices,
                    value=str(default) if default is not None else Select.NULL,
                    allow_blank=name not in required,
                )
            elif field.get("type") == "boolean":
                widget = Checkbox(str(field.get("title") or name), value=bool(default))
            else:
                kind = field.get("type")
                widget = Input(
                    value="" if default is None else str(default),
                    type=kind if kind in ("integer", "number") else "text",
                    password=field.get("format") == "password",
                )
            self.fields[name] = widget
            yield widget

    def on_mount(self) -> None:
        first = next(iter(self.fields.values()), None)
        (first or self.query_one("#accept", Button)).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        assert event.button.id is not None
        self.action_answer(event.button.id)

    @on(Input.Submitted)
    def submitted(self) -> None:
        self.action_answer("accept")

    def action_answer(self, action: str) -> None:
        if action != "accept":
            self.dismiss(types.ElicitResult(action="decline" if action == "decline" else "cancel"))
            return
        params = self.request.params
        if isinstance(params, types.ElicitRequestURLParams):
            self.open_url(params.url)
            self.dismiss(types.ElicitResult(action="accept"))
            return
        content, problem = self.values()
        if problem:
            self.query_one(".elicitation-problem", Static).update(
                Content.styled(problem, "$text-error")
            )
            return
        self.dismiss(types.ElicitResult(action="accept", content=content))

    def values(self) -> tuple[dict[str, Any], str]:
        """The form's values as the schema's types, or a problem to fix first."""
        properties = self.schema.get("properties", {})
        required = set(self.schema.get("required", []))
        content: dict[str, Any] = {}
        for name, widget in self.fields.items():
            kind = properties.get(name, {}).get("type")
            if isinstance(widget, Checkbox):
                content[name] = widget.value
                continue
            if isinstance(widget, Select):
                value = widget.value
                if isinstance(value, NoSelection):
                    if name in required:
                        return {}, f"Choose a value for {name}."
                    continue
                content[name] = [value] if kind == "array" else value
                continue
            text = widget.value.strip()
            if not text:
                if name in required:
                    return {}, f"{name} is required."
                continue
            try:
                content[name] = (
                    int(text) if kind == "integer" else float(text) if kind == "number" else text
                )
            except ValueError:
                return {}, f"{name} must be a {kind}."
        return content, ""
