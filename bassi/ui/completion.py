"""Completions for the input line: slash commands (MCP prompts among them), tool names
after ``/tool``, and resources after ``@``.

Pure functions over the command table and the registry's tools, so the suggester in the
input and the hint line under it agree, and tests need no terminal.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.suggester import Suggester

from bassi.core.offers import PromptInfo, ResourceInfo, ResourceTemplateInfo
from bassi.core.tools import ToolInfo
from bassi.ui.commands import COMMANDS, Argument

MAX_COMPLETIONS = 8


def tool_names(tools: Iterable[ToolInfo]) -> list[str]:
    """What a person may type for each tool: its bare name when unique, and ``server/tool``."""
    return sorted(_names(tools), key=lambda n: (len(n), n))


def _names(tools: Iterable[ToolInfo], *, qualified: bool = False) -> set[str]:
    """``qualified``: the model's names (``mcp__server__tool``) too, once someone types them."""
    tools = list(tools)
    counts = Counter(t.name for t in tools)
    names = {t.ref for t in tools} | {t.name for t in tools if counts[t.name] == 1}
    return names | {t.qualified_name for t in tools} if qualified else names


@dataclass(frozen=True)
class Offers:
    """What servers offer besides tools, for completion (all optional)."""

    prompts: Iterable[PromptInfo] = ()
    resources: Iterable[ResourceInfo] = ()
    templates: Iterable[ResourceTemplateInfo] = ()


def completions(
    value: str,
    tools: Iterable[ToolInfo],
    pinned: Iterable[ToolInfo],
    offers: Offers | None = None,
) -> list[str]:
    """Whole input lines that extend ``value``, best first (shortest, then alphabetical).
    Each keeps what was typed as its prefix, so it can be shown inline after the cursor."""
    offers = offers or Offers()
    if not value.startswith("/"):
        return _resource_completions(value, offers)
    lowered = value.lower()
    lines = [
        c.text + (" " if c.argument is not Argument.NONE else "")
        for c in COMMANDS
        if (c.text + " ").startswith(lowered) or c.text.startswith(lowered)
    ]
    lines += [
        f"/{p.command}" + (" " if p.arguments else "")
        for p in offers.prompts
        if f"/{p.command}".lower().startswith(lowered)
    ]
    prefix = next((p for p in ("/tool unpin ", "/tool ") if lowered.startswith(p)), "")
    typed = lowered[len(prefix) :]
    qualified = typed.startswith("mcp")
    if prefix == "/tool unpin ":
        names = _names(pinned, qualified=qualified)
    elif prefix:
        names = _names(tools, qualified=qualified)
    else:
        names = set()
    lines += [prefix + n for n in names if n.lower().startswith(typed)]
    found = {value + line[len(value) :] for line in lines if len(line) > len(value)}
    return heapq.nsmallest(MAX_COMPLETIONS, found, key=lambda s: (len(s), s))


def _resource_completions(value: str, offers: Offers) -> list[str]:
    """After an ``@`` word at the end of a message: the listed resources it begins, and the
    fixed start of each template (the rest is for the person to fill in)."""
    start = max(value.rfind(" "), value.rfind("\n")) + 1
    word = value[start:]
    if not word.startswith("@"):
        return []
    references = {r.reference for r in offers.resources}
    references |= {f"@{t.server}:{t.stem}" for t in offers.templates}
    typed = word.lower()
    found = {value[:start] + r for r in references if r.lower().startswith(typed) and r != word}
    return heapq.nsmallest(MAX_COMPLETIONS, found, key=lambda s: (len(s), s))


class InputSuggester(Suggester):
    """Inline (grey) suggestion for the prompt: the best completion."""

    def __init__(
        self,
        tools: Callable[[], Iterable[ToolInfo]],
        pinned: Callable[[], Iterable[ToolInfo]],
        offers: Callable[[], Offers] | None = None,
    ) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._tools = tools
        self._pinned = pinned
        self._offers = offers

    async def get_suggestion(self, value: str) -> str | None:
        offers = self._offers() if self._offers is not None else None
        found = completions(value, self._tools(), self._pinned(), offers)
        return found[0] if found else None
