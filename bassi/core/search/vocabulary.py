"""Closing the gap between how people ask and how tool authors write.

"get rid of the calendar" should find ``delete-calendar``; "did anyone email me" should find
``list-mail-messages``. ``vocabulary.txt`` lists groups of words and phrases that stand in for
each other in tool language; a query word expands into its group, each stand-in counting a
bit less than the word itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from bassi.core.search.analysis import STOP_WORDS, is_content, stem, words

MAX_PHRASE = 4

Stems = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Concept:
    """One thing the query asks for: the words as typed, and every way a tool may say it,
    each with how much a match on it counts."""

    surfaces: tuple[str, ...]
    members: tuple[tuple[Stems, float], ...]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    expansions: dict[Stems, tuple[Stems, ...]]
    """Keyed by an entry's stems including stop words; values are the stand-ins' content
    stems (stop words dropped), never empty tuples."""

    @classmethod
    def parse(cls, text: str) -> Vocabulary:
        expansions: dict[Stems, dict[Stems, None]] = {}
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            left, arrow, right = line.partition("->")
            sources = [_entry(e) for e in left.split(",") if e.strip()]
            targets = [_entry(e) for e in right.split(",") if e.strip()] if arrow else sources
            for source in sources:
                out = expansions.setdefault(source, {})
                for target in targets:
                    content = _content(target)
                    if content and target != source:
                        out[content] = None
        return cls({k: tuple(v) for k, v in expansions.items() if v})

    def concepts(self, text: str, weight: float) -> list[Concept]:
        """Split a query into concepts: vocabulary phrases first (longest wins), then single
        content words."""
        tokens = list(words(text))
        stemmed = [stem(t) for t in tokens]
        out: list[Concept] = []
        i = 0
        while i < len(tokens):
            for n in range(min(MAX_PHRASE, len(tokens) - i), 0, -1):
                key = tuple(stemmed[i : i + n])
                if n == 1 and not is_content(tokens[i]):
                    break
                if n > 1 and key not in self.expansions:
                    continue
                own = _content(key)
                members: list[tuple[Stems, float]] = [(own, 1.0)] if own else []
                members += [(m, weight) for m in self.expansions.get(key, ()) if m != own]
                if members:
                    out.append(Concept(tuple(tokens[i : i + n]), tuple(members)))
                i += n - 1
                break
            i += 1
        return out


def _entry(text: str) -> Stems:
    return tuple(stem(w) for w in words(text.strip()))


def _content(stems: Sequence[str]) -> Stems:
    return tuple(s for s in stems if s not in _STOP_STEMS and len(s) > 1)


_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)


@cache
def default_vocabulary() -> Vocabulary:
    text = resources.files("bassi.core.search").joinpath("vocabulary.txt").read_text("utf-8")
    return Vocabulary.parse(text)
