"""A tool call in the conversation: which tool on which server, with what, and what came back.

Arguments and results come from the model and from servers, so they are shown as plain text,
and capped: a tool that returns megabytes must not stall the chat log. A call bassi refused
before it ran (its arguments broke the tool's schema) reads "refused" with the reason, not
"error": the tool did not fail, it never ran. While the call runs,
the server's progress notifications update the header; a finished call shows its structured
content as a table (a list of records) or indented JSON, and says what its images and
resources are (type, size) rather than dumping them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from bassi.core.events import ToolCallStarted
from bassi.core.safe_text import clean, one_line
from bassi.core.tool_results import ResultBlock, ResultData, ResultMedia, data_text, media_label
from bassi.ui.safe import plain, plain_line
from bassi.ui.wording import counted

PREVIEW_LINES = 6
PREVIEW_CHARS = 600
EXPANDED_CHARS = 50_000
ARGUMENTS_CHARS = 400


def format_arguments(arguments: Mapping[str, Any]) -> str:
    """``key=value`` pairs, values as JSON, so a reader sees exactly what the model sent."""
    parts = []
    for key, value in arguments.items():
        try:
            shown = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            shown = repr(value)
        parts.append(f"{key}={shown}")
    return "  ".join(parts)


def preview(text: str) -> tuple[str, str]:
    """The head of a result, and what was left out ("" when nothing was)."""
    lines = text.splitlines()
    head = "\n".join(lines[:PREVIEW_LINES])
    hidden = len(lines) - PREVIEW_LINES
    cut = len(head) > PREVIEW_CHARS
    if cut:
        head = head[:PREVIEW_CHARS]
    if hidden > 0:
        return head, counted(hidden, "more line")
    return head, f"{len(text) - len(head):,} more characters" if cut else ""


class ToolCallBlock(Vertical):
    """Compact by default; Enter or a click expands a long result."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_expanded", "Expand/collapse result")
    ]

    expanded: reactive[bool] = reactive(False)

    def __init__(
        self,
        tool: str,
        server: str | None,
        arguments: Mapping[str, Any],
        call_id: str = "",
    ) -> None:
        super().__init__(classes="tool-call -running")
        self.tool = tool
        self.server = server
        self.arguments = dict(arguments)
        self.call_id = call_id
        self.result: str | None = None
        self.is_error = False
        self.refused: str | None = None
        self.progress: str = ""

    @classmethod
    def of(cls, call: ToolCallStarted) -> ToolCallBlock:
        """The block for a call as the agent made it (a non-MCP tool has no server)."""
        return cls(call.tool or call.qualified_name, call.server, call.arguments, call.id)

    def show_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress notification from the server: "2/5 · copying files"."""
        if self.result is not None:
            return
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        self.progress = f"{amount} · {one_line(message, 80)}" if message else amount
        if self.is_mounted:
            self.query_one(".tool-call-header", Static).update(self._header())

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-call-header")
        args = format_arguments(self.arguments)
        arguments = Static(plain(args, max_chars=ARGUMENTS_CHARS), classes="tool-call-args")
        arguments.display = bool(args)
        yield arguments
        yield Static(classes="tool-call-result")

    def finish(
        self,
        text: str,
        is_error: bool,
        refused: str | None = None,
        content: tuple[ResultBlock, ...] = (),
    ) -> None:
        """Show the result; ``refused`` is the reason when bassi refused the call,
        ``content`` what the server's own result held besides text."""
        parts = [text]
        parts += [data_text(b.data) for b in content if isinstance(b, ResultData)]
        parts += [f"▣ {media_label(b)}" for b in content if isinstance(b, ResultMedia)]
        self.result = clean("\n".join(p for p in parts if p), max_chars=EXPANDED_CHARS)
        self.is_error = is_error
        self.refused = refused
        self.remove_class("-running")
        self.set_class(is_error and refused is None, "-error")
        self.set_class(refused is not None, "-refused")
        self.can_focus = bool(preview(self.result)[1])
        if self.is_mounted:
            self._show_result()

    def on_mount(self) -> None:
        if self.result is not None:
            self._show_result()

    def action_toggle_expanded(self) -> None:
        if self.result is not None and preview(self.result)[1]:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_expanded()

    def watch_expanded(self) -> None:
        if self.is_mounted and self.result is not None:
            self._show_result()

    def _header(self) -> Content:
        if self.result is None:
            state = Content.styled("running…", "$text-warning")
            if self.progress:
                state = state + Content.styled(f" {self.progress}", "$text-warning")
        elif self.refused is not None:
            state = Content.styled("⊘ refused: ", "$text-warning bold") + plain_line(
                self.refused, 160, "$text-warning"
            )
        elif self.is_error:
            state = Content.styled("✗ error", "$text-error bold")
        else:
            state = Content.styled("✓", "$text-success")
        parts = [Content.styled("⚙ ", "$text-accent"), plain_line(self.tool, 80, "bold")]
        if self.server:
            parts += [Content.styled(" · ", "$foreground-muted"), plain_line(self.server, 64)]
        return Content("").join([*parts, Content("  "), state])

    def _show_result(self) -> None:
        assert self.result is not None
        self.query_one(".tool-call-header", Static).update(self._header())
        widget = self.query_one(".tool-call-result", Static)
        if self.expanded:
            body = Content(self.result) + Content.styled("\n(collapse)", "$text-accent underline")
        else:
            head, left_out = preview(self.result)
            body = Content(head or "(no output)")
            if left_out:
                more = f"\n… {left_out} (enter/click to expand)"
                body = body + Content.styled(more, "$text-accent")
        widget.update(body)
