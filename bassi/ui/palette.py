"""Ctrl+P: the command palette searches tools through the same index as ``/tools search``.

Choosing a hit opens the tool's card, where it can be pinned.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo

if TYPE_CHECKING:
    from bassi.ui.app import BassiApp

LIMIT = 20


def _prompt(tool: ToolInfo) -> Text:
    """Name on the first line, what it does on the second; plain text (servers wrote it)."""
    prompt = Text(one_line(tool.ref, 100), style="bold")
    summary = one_line(tool.description, 100)
    if summary:
        prompt.append("\n" + summary, style="dim")
    return prompt


class ToolsProvider(Provider):
    @property
    def bassi(self) -> BassiApp:
        from bassi.ui.app import BassiApp

        assert isinstance(self.app, BassiApp)
        return self.app

    async def search(self, query: str) -> Hits:
        hits = self.bassi.runtime.search(query, limit=LIMIT)
        best = max((h.score for h in hits), default=1.0) or 1.0
        for hit in hits:
            yield Hit(
                hit.score / best,
                _prompt(hit.tool),
                partial(self.bassi.open_card, hit.tool),
                text=hit.tool.ref,
            )

    async def discover(self) -> Hits:
        """Before anything is typed: the pinned tools, the ones a person reaches for."""
        for tool in self.bassi.runtime.pinned():
            yield DiscoveryHit(_prompt(tool), partial(self.bassi.open_card, tool), text=tool.ref)
