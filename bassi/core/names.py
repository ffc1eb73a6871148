"""The names the model calls tools by, and names shown so people see every character.

What the bundled Claude Code CLI (2.1.330) does with an MCP tool's name, checked by listing
tools through it to the scripted model and calling them:

1. It normalises the name to NFKC and drops characters of the Unicode categories Cf (format:
   zero-width spaces, bidi controls, tag characters), Co (private use) and Cn (unassigned).
   So ``exec\\u200bute`` and the full-width ``ｅxecute`` both reach the model as ``execute``.
2. It replaces every remaining character outside ``[A-Za-z0-9_-]``, one for one, with ``_``:
   ``rm.all``, ``rm all`` and ``café`` become ``rm_all``, ``rm_all`` and ``caf_``.
3. A tool whose ``mcp__<server>__<tool>`` would be longer than 128 characters is dropped from
   the model's list without a word.
4. Of several tools that end up with one name, the model sees one, and a call by that name
   goes to the first one the server listed.

bassi therefore lists every tool under its model-facing name itself (the CLI then changes
nothing) and maps a call back to exactly one original tool. Two originals with one
model-facing name are never listed and a call by that name is refused: no grant for one of
them may ever run the other. The same holds for a name too long to list.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from bassi.core.reveal import reveal
from bassi.core.tools import QUALIFIED_PREFIX, SEPARATOR

MAX_QUALIFIED_CHARS = 128
"""Longest ``mcp__<server>__<tool>`` the CLI lists."""

_DROPPED_CATEGORIES = frozenset({"Cf", "Co", "Cn"})
_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")


def model_facing(name: str) -> str:
    """The name the CLI gives the model for a tool named ``name`` (see the module doc)."""
    normal = unicodedata.normalize("NFKC", name)
    kept = "".join(c for c in normal if unicodedata.category(c) not in _DROPPED_CATEGORIES)
    return _OUTSIDE.sub("_", kept)


@dataclass(frozen=True, slots=True)
class Clash:
    """Why a tool cannot be listed to the model under any name."""

    model_name: str
    others: tuple[str, ...] = ()
    """The other original names that reach the model as ``model_name``."""
    too_long: bool = False

    def describe(self, server: str) -> str:
        if self.too_long:
            return (
                f"its name mcp__{server}__{self.model_name} is longer than "
                f"{MAX_QUALIFIED_CHARS} characters, which the model cannot call"
            )
        shown = ", ".join(repr(reveal(n)) for n in self.others)
        return f"{shown} of the same server also reach the model as '{self.model_name}'"


class ServerNames:
    """One server's tools by model-facing name: each name maps to exactly one original, or
    to none when several collide."""

    def __init__(self, server: str, names: Sequence[str]) -> None:
        self.server = server
        by_model: dict[str, list[str]] = {}
        for name in names:
            by_model.setdefault(model_facing(name), []).append(name)
        self._original: dict[str, str] = {}
        self._clash: dict[str, Clash] = {}
        room = MAX_QUALIFIED_CHARS - len(f"{QUALIFIED_PREFIX}{server}{SEPARATOR}")
        for model, originals in by_model.items():
            if len(originals) == 1 and len(model) <= room:
                self._original[model] = originals[0]
                continue
            for original in originals:
                others = tuple(o for o in originals if o != original)
                self._clash[original] = Clash(model, others, too_long=len(model) > room)
        self._model = {original: model for model, original in self._original.items()}

    def original(self, model_name: str) -> str | None:
        """The one tool a call by ``model_name`` means, or None (unknown or colliding)."""
        return self._original.get(model_name)

    def model_name(self, original: str) -> str | None:
        """The name the model calls ``original`` by, or None when it cannot be listed."""
        return self._model.get(original)

    def clash(self, original: str) -> Clash | None:
        return self._clash.get(original)

    def clashes_for(self, model_name: str) -> tuple[str, ...]:
        """The originals that collide on ``model_name`` (empty when none do)."""
        return tuple(o for o, c in self._clash.items() if c.model_name == model_name)
