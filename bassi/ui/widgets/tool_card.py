"""A tool's card: everything a person needs to decide whether the agent should use it.

Its parameters are the rows every display shares (``bassi.core.parameters``), nested fields
included. When the tool's input schema is invalid the card says so: bassi cannot check that
tool's calls, they reach the server as the model wrote them.
"""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from bassi.core.parameters import parameters
from bassi.core.tools import Origin, ToolInfo
from bassi.core.validation import SchemaChecks
from bassi.ui.safe import plain, plain_line, plain_text

DESCRIPTION_CHARS = 4_000
"""Enough for any honest description; a megabyte one is cut, with the cut marked."""


def parameter_table(tool: ToolInfo) -> Table | Content:
    rows = parameters(tool)
    if not rows:
        return Content.styled("No parameters.", "$foreground-muted")
    table = Table(box=None, expand=True, pad_edge=False, header_style="bold")
    table.add_column("name", no_wrap=True)
    table.add_column("type")
    table.add_column("required")
    table.add_column("default")
    table.add_column("description", ratio=1)
    for p in rows:
        table.add_row(
            plain_text(p.name, "bold", max_chars=80),
            plain_text(p.type, max_chars=60),
            "yes" if p.required else "no",
            plain_text(p.default, max_chars=60),
            plain_text(p.description, max_chars=2_000),
        )
    return table


class ToolCard(Vertical):
    """Qualified name, server, full description and the parameter table; says when pinned,
    and whether the schema is invalid once ``schemas`` has compiled it (on a worker: a
    large schema takes a moment the first time)."""

    pinned: reactive[bool] = reactive(False)
    schema_problem: reactive[str | None] = reactive(None)

    def __init__(
        self,
        tool: ToolInfo,
        *,
        pinned: bool = False,
        available: bool = True,
        schemas: SchemaChecks | None = None,
    ) -> None:
        super().__init__(classes="tool-card")
        self.tool = tool
        self.available = available
        self.schemas = schemas
        self.set_reactive(ToolCard.pinned, pinned)
        self.border_title = plain_line(tool.ref, 100)

    def compose(self) -> ComposeResult:
        tool = self.tool
        origin = "in-process" if tool.origin is Origin.IN_PROCESS else "external"
        about = Content("").join(
            [
                plain_line(tool.qualified_name, 160, "bold"),
                Content.styled("  server ", "$foreground-muted"),
                plain_line(tool.server, 64),
                Content.styled(f" ({origin})", "$foreground-muted"),
                Content("")
                if self.available
                else Content.styled("  unavailable: server not connected", "$text-error"),
            ]
        )
        yield Static(about, classes="tool-card-about")
        yield Static(classes="tool-card-schema-problem")
        description = tool.description.strip() or "(no description)"
        yield Static(
            plain(description, max_chars=DESCRIPTION_CHARS), classes="tool-card-description"
        )
        yield Static(Content.styled("Parameters", "bold"), classes="tool-card-heading")
        yield Static(parameter_table(tool), classes="tool-card-parameters")

    def on_mount(self) -> None:
        self.watch_pinned(self.pinned)
        if self.schemas is not None:
            self.run_worker(self._check_schema(self.schemas), exclusive=True)

    async def _check_schema(self, schemas: SchemaChecks) -> None:
        self.schema_problem = (await schemas.ready(self.tool)).problem

    def watch_schema_problem(self, problem: str | None) -> None:
        self.set_class(problem is not None, "-schema-invalid")
        if problem is not None and self.is_mounted:
            self.query_one(".tool-card-schema-problem", Static).update(
                Content.styled("⚠ invalid input schema: ", "$text-warning bold")
                + plain_line(problem, 300, "$text-warning")
                + Content.styled(
                    "\nbassi cannot check this tool's calls; they reach the server unchecked.",
                    "$text-warning",
                )
            )

    def watch_pinned(self, pinned: bool) -> None:
        self.set_class(pinned, "-pinned")
        self.border_subtitle = (
            Content.styled("pinned: the agent may use it", "$text-success")
            if pinned
            else Content.styled("not pinned", "$foreground-muted")
        )
