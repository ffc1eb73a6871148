"""Completions for the input line: slash commands, then tool names after ``/tool``.

Pure functions over the command table and the registry's tools, so the suggester in the
input and the hint line under it agree, and tests need no terminal.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable

from textual.suggester import Suggester

from bassi.core.tools import ToolInfo
from bassi.ui.commands import COMMANDS, Argument

MAX_COMPLETIONS = 8


def tool_names(tools: Iterable[ToolInfo]) -> list[str]:
    """What a person may type for each tool: its bare name when unique, and ``server/tool``."""
    return sorted(_names(tools), key=lambda n: (len(n), n))


def _names(tools: Iterable[ToolInfo]) -> set[str]:
    tools = list(tools)
    counts = Counter(t.name for t in tools)
    return {t.ref for t in tools} | {t.name for t in tools if counts[t.name] == 1}


def completions(value: str, tools: Iterable[ToolInfo], pinned: Iterable[ToolInfo]) -> list[str]:
    """Whole input lines that extend ``value``, best first (shortest, then alphabetical).
    Each keeps what was typed as its prefix, so it can be shown inline after the cursor."""
    if not value.startswith("/"):
        return []
    lowered = value.lower()
    lines = [
        c.text + (" " if c.argument is not Argument.NONE else "")
        for c in COMMANDS
        if (c.text + " ").startswith(lowered) or c.text.startswith(lowered)
    ]
    if lowered.startswith("/tool unpin "):
        prefix, names = "/tool unpin ", _names(pinned)
    elif lowered.startswith("/tool "):
        prefix, names = "/tool ", _names(tools)
    else:
        prefix, names = "", set()
    typed = lowered[len(prefix) :]
    lines += [prefix + n for n in names if n.lower().startswith(typed)]
    found = {value + line[len(value) :] for line in lines if len(line) > len(value)}
    return heapq.nsmallest(MAX_COMPLETIONS, found, key=lambda s: (len(s), s))


class InputSuggester(Suggester):
    """Inline (grey) suggestion for the prompt: the best completion."""

    def __init__(
        self,
        tools: Callable[[], Iterable[ToolInfo]],
        pinned: Callable[[], Iterable[ToolInfo]],
    ) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._tools = tools
        self._pinned = pinned

    async def get_suggestion(self, value: str) -> str | None:
        found = completions(value, self._tools(), self._pinned())
        return found[0] if found else None
