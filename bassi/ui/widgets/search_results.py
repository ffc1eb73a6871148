"""The ranked table ``/tools search`` shows; choosing a row opens the tool's card, ``x`` says
why a row ranks where it does.

Each description starts with what the server declares about the tool (read-only,
destructive, ...), so a person comparing tools sees it before opening a card."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from bassi.core.hints import Hints
from bassi.core.reveal import reveal
from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo

if TYPE_CHECKING:
    from bassi.core.search import SearchHit

MATCH_STYLE = "bold underline"


def highlight(text: str, terms: Iterable[str]) -> Text:
    """``text`` (already safe) with every word matching a query term emphasised."""
    from bassi.core.search.highlight import matched_spans  # with the search engine, once used

    result = Text(text)
    for start, end in matched_spans(text, terms):
        result.stylize(MATCH_STYLE, start, end)
    return result


def score_text(hit: SearchHit) -> Text:
    """The 0-1 score, and "weak" when the match is not to be trusted."""
    text = Text(f"{hit.score:.2f}", justify="right")
    if hit.weak:
        text.append(" weak", style="italic")
    return text


class SearchResults(DataTable[Text]):
    """Rank, tool, server, score and the description's first line, terms highlighted."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open card"),
        Binding("x", "explain", "Why this rank"),
        Binding("escape", "app.focus('prompt')", "Back to input"),
    ]

    class ToolChosen(Message):
        def __init__(self, tool: ToolInfo) -> None:
            super().__init__()
            self.tool = tool

    class ExplainRequested(Message):
        """Show why ``hit`` ranks at ``rank``."""

        def __init__(self, hit: SearchHit, rank: int) -> None:
            super().__init__()
            self.hit = hit
            self.rank = rank

    def __init__(self, hits: Sequence[SearchHit]) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, classes="search-results")
        self.hits = list(hits)
        self._filled_for = -1

    def on_mount(self) -> None:
        for key in ("#", "tool", "server", "score", "description"):
            self.add_column(key, key=key)

    def on_resize(self) -> None:
        """Fit the description to the width, so the table never scrolls sideways."""
        if self.size.width != self._filled_for:
            self._filled_for = self.size.width
            self._fill(self.size.width)

    def _fill(self, width: int) -> None:
        names = [one_line(reveal(h.tool.name), 40) for h in self.hits]
        servers = [one_line(reveal(h.tool.server), 20) for h in self.hits]
        fixed = len(str(len(self.hits))) + max(map(len, names), default=4)
        fixed += max(map(len, servers), default=6) + 5
        room = max(20, width - fixed - 2 * 5 - 2)
        row = self.cursor_row
        self.clear()
        for rank, (hit, name, server) in enumerate(zip(self.hits, names, servers, strict=True), 1):
            terms = hit.matched_terms
            labels = ", ".join(Hints.of(hit.tool).labels())
            declared = Text(f"[{labels}] ", style="dim") if labels else Text("")
            about = highlight(one_line(hit.tool.description, max(10, room - len(declared))), terms)
            self.add_row(
                Text(str(rank), justify="right"),
                highlight(name, terms),
                Text(server),
                score_text(hit),
                declared + about,
                key=hit.tool.ref,
            )
        self.move_cursor(row=row)

    def action_explain(self) -> None:
        if self.hits:
            row = min(self.cursor_row, len(self.hits) - 1)
            self.post_message(self.ExplainRequested(self.hits[row], row + 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.ToolChosen(self.hits[event.cursor_row].tool))
