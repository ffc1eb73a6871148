"""The catalog of servers and tools, shown in the chat log at startup and by ``/tools``.

It is live: it listens to the registry, so a slow server fills in where it stands and a failed
one shows why, without the user asking again. Tools whose input schema turned out invalid
(their calls go unchecked) are named under their server as the background check finds them.
A project server the user has not approved says
so and shows what it would run. Tool names are shown with invisible characters written out,
and marked when the model cannot call them (a name clash) or when their definition changed
since the user pinned or allowed them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.style import Style as VisualStyle
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from bassi.core.policy import AccessPolicy
from bassi.core.registry import Registry, ServerEntry, ServerStatus
from bassi.core.reveal import reveal
from bassi.core.tools import Origin, ToolInfo
from bassi.ui.bursts import CatchUp
from bassi.ui.safe import plain, plain_line
from bassi.ui.wording import counted

MUTED = "$foreground-muted"
PREVIEW_TOOLS = 8
"""A group lists this many tool names before "+N more"."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""Frames of the one spinner the catalog shows (on its total line) while servers start. One:
thirty servers each spinning cost the screen thirty repaints a frame, which at start-up,
with the servers' work competing for the interpreter, stalled the UI for seconds."""
STARTING_ICON = "…"
_ICONS = {
    ServerStatus.PENDING: ("?", "$text-warning"),
    ServerStatus.CONNECTED: ("●", "$text-success"),
    ServerStatus.NEEDS_AUTH: ("⚿", "$text-warning"),
    ServerStatus.FAILED: ("✗", "$text-error"),
    ServerStatus.DISABLED: ("○", "$foreground-muted"),
}
_UNKNOWN_ICON = ("?", "$foreground-muted")
"""A status this widget has no look for yet (one added later) still shows, by its name."""


INDENT = 2
"""Cells a server's tool names, failure and warnings sit in from its status line."""


class ServerGroup(Widget):
    """One server: a status line and, indented under it, the reason it failed, its warnings,
    its tool names and the tools whose schema is invalid. One widget that wraps its own lines:
    as five widgets, thirty servers made most of what the screen lays out again at each
    change while they start, and each layout pass covers the whole chat."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_expanded", "Expand/collapse tools")
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "server-group--error",
        "server-group--warnings",
        "server-group--tools",
    }

    expanded: reactive[bool] = reactive(False)

    def __init__(self, entry: ServerEntry, policy: AccessPolicy | None = None) -> None:
        super().__init__(classes="server-group")
        self.entry = entry
        self.policy = policy
        self._wrapped: tuple[int, list[Content]] | None = None
        self.can_focus = self.expandable

    def show(self, entry: ServerEntry) -> None:
        self.entry = entry
        self._changed()

    @property
    def expandable(self) -> bool:
        return len(self.entry.tools) > PREVIEW_TOOLS

    def action_toggle_expanded(self) -> None:
        if self.expandable:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_expanded()

    def watch_expanded(self) -> None:
        self._changed()

    def render(self) -> Content:
        return Content("\n").join(self._lines(self.content_region.width))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._wrapped = None  # the lines hold the colours of the theme they were made in

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def _changed(self) -> None:
        """Draw again; lay the screen out again only if the number of lines changed."""
        self.can_focus = self.expandable
        before = self._wrapped
        self._wrapped = None
        width = self.content_region.width
        same_height = before is not None and width > 0 and len(self._lines(width)) == len(before[1])
        self.refresh(layout=not same_height)

    def _lines(self, width: int) -> list[Content]:
        """Every line at ``width``, the parts wrapped under their indent."""
        if self._wrapped is not None and self._wrapped[0] == width:
            return self._wrapped[1]
        lines = self._header().wrap(max(1, width))
        for part in self._parts():
            lines += [Content(" " * INDENT) + line for line in part.wrap(max(1, width - INDENT))]
        self._wrapped = (width, lines)
        return lines

    def _parts(self) -> list[Content]:
        entry = self.entry
        parts = []
        if entry.status is ServerStatus.FAILED and entry.error:
            parts.append(self._styled(plain(entry.error, max_chars=600), "error"))
        notes = [f"⚠ {w}" for w in entry.warnings]
        if entry.status is ServerStatus.NEEDS_AUTH:
            notes.insert(0, "sign in with /mcp (or: bassi mcp login " + entry.name + ")")
        if notes:
            parts.append(self._styled(plain("\n".join(notes), max_chars=1_000), "warnings"))
        if entry.tools:
            parts.append(self._styled(self._tool_names(), "tools"))
        if entry.schema_problems:
            parts.append(self._schema_problems())
        return parts

    def _styled(self, part: Content, component: str) -> Content:
        """``part`` in the colour app.tcss gives the component (its own spans win)."""
        colour = self.get_visual_style(f"server-group--{component}").foreground
        return part.stylize_before(VisualStyle(foreground=colour))

    def _header(self) -> Content:
        entry = self.entry
        if entry.status.starting:
            icon, style = STARTING_ICON, "$text-warning"
        else:
            icon, style = _ICONS.get(entry.status, _UNKNOWN_ICON)
        parts: list[Content] = [
            Content.styled(icon, style),
            Content(" "),
            plain_line(reveal(entry.name), 64, "bold"),
        ]
        if entry.status is ServerStatus.CONNECTED:
            status = Content(counted(len(entry.tools), "tool"))
        elif entry.status.starting:
            doing = plain_line(entry.detail, 90) if entry.detail else Content(entry.status.value)
            status = (doing + Content("…")).stylize("$text-warning")
        elif entry.status is ServerStatus.FAILED:
            status = Content.styled("failed", "$text-error")
        elif entry.status is ServerStatus.NEEDS_AUTH:
            status = Content.styled("needs sign-in", "$text-warning")
        elif entry.status is ServerStatus.PENDING:
            status = Content.styled("waiting for your approval (/approve)", "$text-warning")
        else:
            status = Content.styled(entry.status.value, "$foreground-muted")
        parts += [Content("  "), status]
        where = "in-process" if entry.origin is Origin.IN_PROCESS else entry.target
        if where:
            parts += [Content("  "), plain_line(where, 70, "$foreground-muted")]
        return Content("").join(parts)

    def _tool_names(self) -> Content:
        tools = self.entry.tools
        shown = tools if self.expanded else tools[:PREVIEW_TOOLS]
        style = "" if self.entry.available else "$foreground-muted"
        names = Content(", ").join(self._tool_name(t, style) for t in shown)
        if not self.entry.available:
            names = names + Content.styled("  (unavailable)", "$foreground-muted")
        hidden = len(tools) - len(shown)
        if hidden:
            names = names + Content.styled(f"  +{hidden} more", "$text-accent underline")
        elif self.expanded:
            names = names + Content.styled("  (collapse)", "$text-accent underline")
        return names

    def _schema_problems(self) -> Content:
        names = list(self.entry.schema_problems)
        shown = Content(", ").join(plain_line(n, 64) for n in names[:PREVIEW_TOOLS])
        more = f" +{len(names) - PREVIEW_TOOLS} more" if len(names) > PREVIEW_TOOLS else ""
        return (
            Content.styled("⚠ invalid input schema, calls go unchecked: ", "$text-warning")
            + shown
            + Content(more)
        )

    def _tool_name(self, tool: ToolInfo, style: str) -> Content:
        name = plain_line(reveal(tool.name), 64, style)
        if self.policy is None:
            return name
        if self.policy.clash(tool):
            return name + Content.styled(" (name clash: cannot be called)", "$text-error")
        if self.policy.allowance(tool).changed:
            return name + Content.styled(" (changed since you allowed it)", "$text-error")
        return name


def _lines_fitting(text: object, width: int) -> int | None:
    """How many lines ``text`` is at ``width`` when none of them wraps, else None. Replacing
    text by text of as many unwrapped lines leaves the layout as it is."""
    if not isinstance(text, Content) or width <= 0:
        return None
    lines = text.split("\n")
    return len(lines) if all(line.cell_length <= width for line in lines) else None


class CatalogView(Vertical):
    """Every server in the registry, in-process first, then external, then the total."""

    def __init__(
        self,
        registry: Registry,
        problems: Sequence[str] = (),
        policy: AccessPolicy | None = None,
    ) -> None:
        super().__init__(classes="catalog")
        self.registry = registry
        self.problems = list(problems)
        self.policy = policy
        self._unsubscribe: Callable[[], None] | None = None
        self._spin_timer: Timer | None = None
        self._frame = 0

    def compose(self) -> ComposeResult:
        yield Static(Content.styled("Tools", "bold"), classes="catalog-title")
        for problem in self.problems:
            yield Static(
                Content.styled("⚠ ", "$text-warning") + plain(problem, max_chars=600),
                classes="catalog-problem",
            )
        # The servers known now are composed with the rest, so the catalog is on screen in
        # one layout pass; ``_sync`` follows the registry from there.
        entries = self.registry.servers()
        yield Static(
            Content.styled("bassi's own servers", "$foreground-muted"), id="in-process-title"
        )
        for entry in entries:
            if entry.origin is Origin.IN_PROCESS:
                yield ServerGroup(entry, self.policy)
        yield Static(Content.styled("External servers", "$foreground-muted"), id="external-title")
        for entry in entries:
            if entry.origin is Origin.EXTERNAL:
                yield ServerGroup(entry, self.policy)
        yield Static(classes="catalog-total")

    def on_mount(self) -> None:
        self._unsubscribe = self.registry.subscribe(CatchUp(self, self._sync))
        self._sync()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _sync(self) -> None:
        """Bring the groups in line with the registry (new servers are appended in order)."""
        groups = {g.entry.name: g for g in self.query(ServerGroup)}
        entries = self.registry.servers()
        for entry in entries:
            group = groups.get(entry.name)
            if group is None:
                # after the last of its kind: in-process ones end at the external title
                end = "#external-title" if entry.origin is Origin.IN_PROCESS else ".catalog-total"
                self.mount(ServerGroup(entry, self.policy), before=self.query_one(end))
            elif group.entry != entry:
                group.show(entry)
        self.query_one("#in-process-title").display = any(
            e.origin is Origin.IN_PROCESS for e in entries
        )
        self.query_one("#external-title").display = any(
            e.origin is Origin.EXTERNAL for e in entries
        )
        self._spin(any(e.status.starting for e in entries))
        total = self.query_one(".catalog-total", Static)
        line, width = self._total(entries, self._spinner()), total.content_region.width
        height = _lines_fitting(line, width)
        total.update(line, layout=height is None or height != _lines_fitting(total.content, width))

    def _spin(self, connecting: bool) -> None:
        if connecting and self._spin_timer is None and self.app.animation_level != "none":
            self._spin_timer = self.set_interval(0.1, self._tick)
        elif not connecting and self._spin_timer is not None:
            self._spin_timer.stop()
            self._spin_timer = None

    def _tick(self) -> None:
        # A frame is one cell in place of another: repaint the line, never lay out again.
        self._frame += 1
        total = self._total(self.registry.servers(), self._spinner())
        self.query_one(".catalog-total", Static).update(total, layout=False)

    def _spinner(self) -> str | None:
        return SPINNER[self._frame % len(SPINNER)] if self._spin_timer is not None else None

    @staticmethod
    def _total(entries: Sequence[ServerEntry], spinner: str | None) -> Content:
        if not entries:
            return Content.styled(
                "No MCP servers configured. Add some to .mcp.json in this directory.",
                "$foreground-muted",
            )
        tools = sum(len(e.tools) for e in entries if e.available)
        first = (ServerStatus.PENDING, ServerStatus.CONNECTED)
        order = [*first, *(s for s in ServerStatus if s not in first)]
        by_status = {s: sum(e.status is s for e in entries) for s in order}
        parts = [f"{counted(tools, 'tool')} available on {counted(len(entries), 'server')}"]
        parts += [
            f"{n} {'waiting for approval' if s is ServerStatus.PENDING else s.value}"
            for s, n in by_status.items()
            if n
        ]
        spinning = Content.styled(f"{spinner} ", "$text-warning") if spinner else Content("")
        return (
            spinning
            + Content.styled(" · ".join(parts), "bold")
            + Content.styled(
                "\n/tools search <words> finds a tool; /tool <name> shows it and pins it.",
                "$foreground-muted",
            )
        )
