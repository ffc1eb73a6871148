"""Finding the word a typo meant, among the words the index knows.

Only words the index has never seen are corrected ("deleet", "broswer"), to words one edit
away (a transposition counts as one). Lookups use a deletion index (SymSpell's trick): two
words within one edit share a string made by deleting at most one character from each.

The index knows stems, and a typo near a word's end is often two edits from its stem
("transacton" from ``transact``): such a word is also corrected to the English words one edit
from it ("transaction"), whose stems the index may know (``english_corrections``).
"""

from __future__ import annotations

import string
from collections.abc import Iterable

MIN_LENGTH = 4
"""Shorter words are too often a different real word one edit away."""


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))} | {word}


class Corrector:
    def __init__(self, lexicon: Iterable[str]) -> None:
        self._lexicon = frozenset(w for w in lexicon if w.isalpha())
        self._by_delete: dict[str, list[str]] | None = None

    def __contains__(self, word: str) -> bool:
        return word in self._lexicon

    def corrections(self, word: str) -> list[str]:
        """Known words within one edit of ``word``; empty for known or short words."""
        if len(word) < MIN_LENGTH or word in self._lexicon or not word.isalpha():
            return []
        if self._by_delete is None:
            self._by_delete = {}
            for known in self._lexicon:
                if len(known) >= MIN_LENGTH - 1:
                    for d in _deletes(known):
                        self._by_delete.setdefault(d, []).append(known)
        found = {k for d in _deletes(word) for k in self._by_delete.get(d, ())}
        return sorted(k for k in found if one_edit(word, k))


def english_corrections(word: str, english: frozenset[str]) -> list[str]:
    """The words of ``english`` one edit from ``word`` (an unknown word of at least
    ``MIN_LENGTH`` letters), by trying every edit: a few hundred set lookups, and no index of
    a whole language to hold in memory."""
    if len(word) < MIN_LENGTH or word in english or not word.isalpha():
        return []
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    letters = string.ascii_lowercase
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in letters}
    edits |= {a + c + b for a, b in splits for c in letters}
    return sorted(edits & english)


def one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of
    neighbouring letters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :] or (
            a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :]
        )
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]
