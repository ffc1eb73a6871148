"""Document expansion: how people talk about a kind of tool, attached to the tool.

Query-side synonyms (``vocabulary.txt``) map a word to a word, but people describe a tool's
job in phrases no tool author writes ("who else can see this" for a permissions list, "land
the PR" for a merge, "catch me up on #general" for a channel's history). ``aliases.txt`` keys
such phrasings to the words of tool *names*: every tool whose name contains all the words of
a key (``mail rule`` matches ``create-mail-rule`` and ``list_mail_rules`` on any server) gets
the phrasings indexed in its own field. Keys are concepts, not particular tools, so a server
bassi has never seen that names its tools the usual way benefits too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise

from bassi.core.search.analysis import stem, stems, words

ALIAS_CHARS = 1_500
"""Cap on one tool's alias text, whatever the number of matching keys."""

Key = frozenset[str]


@dataclass(frozen=True, slots=True)
class Aliases:
    entries: tuple[tuple[Key, str], ...]
    """(stems a tool's name must all contain, phrasings), in file order."""
    key_stems: frozenset[str]
    """Every stem of every key, to find inside a name glued into one word."""

    @classmethod
    def parse(cls, text: str) -> Aliases:
        out: list[tuple[Key, str]] = []
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            key, colon, phrasings = line.partition(":")
            stems = frozenset(stem(w) for w in words(key))
            if colon and stems and phrasings.strip():
                out.append((stems, ", ".join(p.strip() for p in phrasings.split(",") if p.strip())))
        return cls(tuple(out), frozenset(s for key, _ in out for s in key))

    def of(self, name: str) -> str:
        """The phrasings for a tool named ``name`` (empty when no key matches)."""
        have = _name_stems(name, self.key_stems)
        found = [text for key, text in self.entries if key <= have]
        return ", ".join(found)[:ALIAS_CHARS]


def phrase_terms(text: str) -> list[str]:
    """Adjacent content stems of each comma-separated phrasing, as one term each ("open hour"
    of "opening hours"): a request that says the phrase matches it as a phrase, which counts
    more than its words scattered over unrelated tools."""
    out: list[str] = []
    for phrase in text.split(","):
        found = stems(phrase)
        out += [f"{a} {b}" for a, b in pairwise(found)]
    return out


def _name_stems(name: str, key_stems: frozenset[str]) -> frozenset[str]:
    """A name's word stems; a name glued into one word (``sequentialthinking``) also offers
    every key stem it contains, since nothing marks where its words meet."""
    found = [stem(w) for w in words(name[:200])]
    if len(found) == 1 and len(found[0]) > 8:
        glued = found[0]
        return frozenset([glued, *(k for k in key_stems if len(k) >= 4 and k in glued)])
    return frozenset(found)


@cache
def default_aliases() -> Aliases:
    text = resources.files(__package__).joinpath("aliases.txt").read_text("utf-8")
    return Aliases.parse(text)
