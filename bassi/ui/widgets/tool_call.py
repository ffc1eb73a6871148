"""A tool call in the conversation: which tool on which server, with what, and what came back.

Arguments and results come from the model and from servers, so they are shown as plain text,
and capped: a tool that returns megabytes must not stall the chat log. A call bassi refused
before it ran (its arguments broke the tool's schema) reads "refused" with the reason, not
"error": the tool did not fail, it never ran. While the call runs, the server's progress
notifications update the header; a finished call shows its result as people read it (see
``tool_result``: text as text, data as a table or outline, images and resources by type and
size), folded when long; a call the user interrupted shows one short line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from bassi.core.events import ToolCallFinished, ToolCallStarted
from bassi.core.safe_text import clean, one_line
from bassi.core.tool_results import ResultBlock, ResultText
from bassi.ui.safe import plain, plain_line
from bassi.ui.widgets.tool_result import result_text
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


EXPAND_KEY = "ctrl+o"
"""The chat screen's key for the newest folded result (Enter or a click on a focused one)."""


class ToolCallBlock(Vertical):
    """Compact by default; a long result is folded, and expands on Enter, a click, or
    ctrl+o for the newest one. The header always names the server and the tool."""

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
        """What the model got back (cleaned); what is shown is ``shown``."""
        self.shown = ""
        self.is_error = False
        self.refused: str | None = None
        self.progress: str = ""
        self.interrupted = False

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

    def finish_with(self, result: ToolCallFinished) -> None:
        self.finish(
            result.text,
            result.is_error,
            result.refused,
            content=result.content,
            interrupted=result.interrupted,
        )

    def finish(
        self,
        text: str,
        is_error: bool,
        refused: str | None = None,
        *,
        content: Sequence[ResultBlock] = (),
        interrupted: bool = False,
    ) -> None:
        """Show the result: ``refused`` is the reason when bassi refused the call,
        ``content`` the result as blocks (default: ``text`` as it is)."""
        self.result = clean(text, max_chars=EXPANDED_CHARS)
        self.is_error = is_error and not interrupted
        self.refused = refused
        self.interrupted = interrupted
        blocks = content or (ResultText(text),)
        # The CLI's note to the model about a stopped call is not for people to read.
        self.shown = (
            "" if self.interrupted else clean(result_text(blocks), max_chars=EXPANDED_CHARS)
        )
        self.remove_class("-running")
        self.set_class(self.is_error and refused is None, "-error")
        self.set_class(refused is not None, "-refused")
        self.set_class(self.interrupted, "-interrupted")
        self.can_focus = self.foldable
        if self.is_mounted:
            self._show_result()

    @property
    def foldable(self) -> bool:
        """Whether the result is longer than its preview."""
        return self.result is not None and bool(preview(self.shown)[1])

    def on_mount(self) -> None:
        if self.result is not None:
            self._show_result()

    def action_toggle_expanded(self) -> None:
        if self.foldable:
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
        elif self.interrupted:
            state = Content.styled("■ interrupted", "$text-warning")
        elif self.is_error:
            state = Content.styled("✗ error", "$text-error bold")
        else:
            state = Content.styled("✓", "$text-success")
        parts = [Content.styled("⚙ ", "$text-accent")]
        if self.server:
            parts += [plain_line(self.server, 64), Content.styled("/", "$foreground-muted")]
        parts.append(plain_line(self.tool, 80, "bold"))
        return Content("").join([*parts, Content("  "), state])

    def _show_result(self) -> None:
        assert self.result is not None
        self.query_one(".tool-call-header", Static).update(self._header())
        widget = self.query_one(".tool-call-result", Static)
        widget.display = not self.interrupted
        if self.expanded:
            body = Content(self.shown) + Content.styled("\n(collapse)", "$text-accent underline")
        else:
            head, left_out = preview(self.shown)
            body = Content(head or "(no output)")
            if left_out:
                more = f"\n… {left_out} ({EXPAND_KEY} or click to expand)"
                body = body + Content.styled(more, "$text-accent")
        widget.update(body)
