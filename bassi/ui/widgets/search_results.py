"""The ranked table ``/tools search`` shows; choosing a row opens the tool's card."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from bassi.core.safe_text import one_line
from bassi.core.search import SearchHit
from bassi.core.tools import ToolInfo

MATCH_STYLE = "bold underline"
_WORD = re.compile(r"\w+")


def highlight(text: str, terms: Iterable[str]) -> Text:
    """``text`` (already safe) with every word matching a query term emphasised. A word
    matches when it starts with the term, or is a stem of it ("email" for "emails")."""
    result = Text(text)
    terms = [t.lower() for t in terms if t.strip()]
    if not terms:
        return result
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if any(word.startswith(t) or (len(word) >= 4 and t.startswith(word)) for t in terms):
            result.stylize(MATCH_STYLE, match.start(), match.end())
    return result


class SearchResults(DataTable[Text]):
    """Rank, tool, server, score and the description's first line, terms highlighted."""

    class ToolChosen(Message):
        def __init__(self, tool: ToolInfo) -> None:
            super().__init__()
            self.tool = tool

    def __init__(self, query: str, hits: Sequence[SearchHit]) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, classes="search-results")
        self.query_text = query
        self.hits = list(hits)

    def on_mount(self) -> None:
        self.add_column("#", key="rank")
        self.add_column("tool", key="tool")
        self.add_column("server", key="server")
        self.add_column("score", key="score")
        self.add_column("description", key="description")
        for rank, hit in enumerate(self.hits, 1):
            terms = hit.matched_terms
            self.add_row(
                Text(str(rank), justify="right"),
                highlight(one_line(hit.tool.name, 48), terms),
                Text(one_line(hit.tool.server, 24)),
                Text(f"{hit.score:.2f}", justify="right"),
                highlight(one_line(hit.tool.description, 90), terms),
                key=hit.tool.ref,
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.ToolChosen(self.hits[event.cursor_row].tool))
