"""A tool's card: everything a person needs to decide whether the agent should use it.

Besides what the tool does, the card says what the access policy says of it (runs without
asking, and why; asks; never runs), what the server declares about it, anything in its
description that talks to the model, a definition that changed since the user pinned or
allowed it, and a name the model cannot call as exactly this tool. Names are shown with every
invisible character written out.

Its parameters are the rows every display shares (``bassi.core.parameters``), nested fields
included. When the tool's input schema is invalid the card says so: bassi cannot check that
tool's calls, they reach the server as the model wrote them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from bassi.core.hints import Hints
from bassi.core.injection import tool_flags
from bassi.core.parameters import Parameter, parameters
from bassi.core.policy import AccessPolicy, Decision, Verdict
from bassi.core.reveal import reveal
from bassi.core.tools import Origin, ToolInfo
from bassi.ui.safe import plain, plain_line, plain_text

if TYPE_CHECKING:
    from bassi.core.validation import SchemaChecks

MUTED = "$foreground-muted"

DESCRIPTION_CHARS = 4_000
"""Enough for any honest description; a megabyte one is cut, with the cut marked."""


NARROW = 60
"""Below this many cells the parameters are listed one under another: five columns in a
narrow terminal leave each a few cells, and every word becomes an ellipsis."""


class ParameterTable:
    """The parameters as a table, or as a list where the card is narrower than ``NARROW``.
    Decided at render time, so the card follows the terminal as it is resized."""

    def __init__(self, rows: list[Parameter]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._table() if options.max_width >= NARROW else self._list()

    def _table(self) -> Table:
        table = Table(box=None, expand=True, pad_edge=False, header_style="bold")
        table.add_column("name", no_wrap=True)
        table.add_column("type")
        table.add_column("required")
        table.add_column("default")
        table.add_column("description", ratio=1)
        for p in self.rows:
            table.add_row(
                plain_text(p.name, "bold", max_chars=80),
                plain_text(p.type, max_chars=60),
                "yes" if p.required else "no",
                plain_text(p.default, max_chars=60),
                plain_text(p.description, max_chars=2_000),
            )
        return table

    def _list(self) -> Group:
        """Each parameter: its name and facts on one line, its description under it."""
        parts: list[RenderableType] = []
        for p in self.rows:
            facts = [p.type, "required" if p.required else "optional"]
            if p.default:
                facts.append(f"default {p.default}")
            line = plain_text(p.name, "bold", max_chars=80)
            line.append_text(plain_text("  " + ", ".join(facts), "dim", max_chars=140))
            parts.append(line)
            if p.description:
                description = plain_text(p.description, max_chars=2_000)
                parts.append(Padding(description, (0, 0, 0, 2)))
        return Group(*parts)


def parameter_table(tool: ToolInfo) -> ParameterTable | Content:
    rows = parameters(tool)
    if not rows:
        return Content.styled("No parameters.", "$foreground-muted")
    return ParameterTable(rows)


def access_line(decision: Decision) -> Content:
    """What happens when the agent calls the tool, and why, in one line."""
    why = plain_line(decision.reason, 300)
    if decision.verdict is Verdict.ALLOW:
        return Content.styled("Runs without asking: ", "$text-success") + why
    if decision.verdict is Verdict.DENY:
        return Content.styled("Never runs: ", "$text-error") + why
    if decision.changed:
        return Content.styled("Asks before running: ", "$text-warning") + why.stylize(
            "bold $text-error"
        )
    return Content.styled("Asks before running: ", "$text-warning") + why


def hints_line(tool: ToolInfo) -> Content:
    hints = Hints.of(tool)
    declared = ", ".join(hints.labels()) or "nothing (no annotations)"
    if hints.title:
        declared += f"; title “{reveal(hints.title)}”"
    return Content.styled("Declares: ", MUTED) + plain_line(declared, 300)


class ToolCard(Vertical):
    """Qualified name, server, access, declared hints, flags, full description and the
    parameter table; says when pinned, and whether the schema is invalid once ``schemas``
    has compiled it (on a worker: a large schema takes a moment the first time)."""

    pinned: reactive[bool] = reactive(False)
    schema_problem: reactive[str | None] = reactive(None)

    def __init__(
        self,
        tool: ToolInfo,
        policy: AccessPolicy,
        *,
        available: bool = True,
        schemas: SchemaChecks | None = None,
    ) -> None:
        super().__init__(classes="tool-card")
        self.tool = tool
        self.policy = policy
        self.available = available
        self.schemas = schemas
        self.set_reactive(ToolCard.pinned, policy.grants.pin_of(tool.qualified_name) is not None)
        self.border_title = plain_line(reveal(tool.ref), 100)

    def compose(self) -> ComposeResult:
        tool = self.tool
        origin = "in-process" if tool.origin is Origin.IN_PROCESS else "external"
        called = self.policy.model_name(tool)
        about = Content("").join(
            [
                plain_line(called or reveal(tool.qualified_name), 160, "bold"),
                Content.styled("  server ", MUTED),
                plain_line(reveal(tool.server), 64),
                Content.styled(f" ({origin})", MUTED),
                Content("")
                if self.available
                else Content.styled("  unavailable: server not connected", "$text-error"),
            ]
        )
        yield Static(about, classes="tool-card-about")
        if clash := self.policy.clash(tool):
            yield Static(
                Content.styled("Cannot be called: ", "$text-error")
                + plain_line(clash.describe(tool.server), 300),
                classes="tool-card-clash",
            )
        elif called is not None and called != tool.qualified_name:
            yield Static(
                Content.styled("Its own name: ", MUTED)
                + plain_line(reveal(tool.name), 160)
                + Content.styled("  (the model calls it by the name above)", MUTED),
                classes="tool-card-name",
            )
        yield Static(access_line(self.policy.allowance(tool)), classes="tool-card-access")
        yield Static(classes="tool-card-schema-problem")
        yield Static(hints_line(tool), classes="tool-card-hints")
        for flag in tool_flags(tool):
            yield Static(
                Content.styled("⚠ Its description ", "$text-error")
                + plain_line(str(flag), 300, "$text-error"),
                classes="tool-card-flag",
            )
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
            else Content.styled("not pinned", MUTED)
        )
        if self.is_mounted:
            access = self.policy.allowance(self.tool)
            self.query_one(".tool-card-access", Static).update(access_line(access))
