"""Ctrl+P: the command palette searches tools through the same index as ``/tools search``.

Choosing a hit opens the tool's card, where it can be pinned. Each hit shows its 0-1 score
(and "weak" when the match is poor); a filter that cannot be read, or servers still
connecting, show as a line of their own.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo
from bassi.ui.widgets.search_results import highlight
from bassi.ui.wording import counted

if TYPE_CHECKING:
    from bassi.core.search import SearchHit
    from bassi.ui.app import BassiApp

LIMIT = 20


def _nothing() -> None:
    """What choosing a line that is only information does."""


def _prompt(tool: ToolInfo, hit: SearchHit | None = None) -> Text:
    """Name on the first line, what it does on the second, matched words emphasised; plain
    text (servers wrote it). A search hit adds its score."""
    terms = hit.matched_terms if hit is not None else ()
    prompt = highlight(one_line(tool.ref, 100), terms)
    prompt.stylize("bold")
    if hit is not None:
        prompt.append(f"  {hit.score:.2f}", style="dim")
        if hit.weak:
            prompt.append(" weak", style="dim italic")
    summary = one_line(tool.description, 100)
    if summary:
        line = highlight(summary, terms)
        line.stylize("dim")
        prompt.append("\n")
        prompt.append_text(line)
    return prompt


class ToolsProvider(Provider):
    @property
    def bassi(self) -> BassiApp:
        from bassi.ui.app import BassiApp

        assert isinstance(self.app, BassiApp)
        return self.app

    async def search(self, query: str) -> Hits:
        catalog = self.bassi.runtime.catalog
        found = catalog.index.find(query, limit=LIMIT)
        if found.problem is not None:
            yield Hit(1.0, Text(f"Cannot search: {one_line(found.problem, 200)}"), _nothing)
            return
        if found.relaxed and found.hits:
            yield Hit(1.0, Text(one_line(found.relaxed, 200), style="dim"), _nothing)
        for hit in found.hits:
            yield Hit(
                hit.score,
                _prompt(hit.tool, hit),
                partial(self.bassi.open_card, hit.tool),
                text=hit.tool.ref,
            )
        waiting = catalog.waiting()
        if waiting:
            note = f"{counted(len(waiting), 'server')} still connecting; more tools may match"
            yield Hit(0.0, Text(note, style="dim"), _nothing)

    async def discover(self) -> Hits:
        """Before anything is typed: the pinned tools, the ones a person reaches for."""
        for tool in self.bassi.runtime.pinned():
            yield DiscoveryHit(_prompt(tool), partial(self.bassi.open_card, tool), text=tool.ref)
