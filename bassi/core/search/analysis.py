"""Turning tool text and queries into terms.

Tool names glue words together (``list_pull_requests``, ``get-drive-item``, ``driveItemId``)
while people write plain words, so both sides are split the same way: on anything that is not
a letter or digit, and at camelCase humps, then lowercased and stemmed with Whoosh's Porter2
stemmer. Stems are cached because tool text repeats the same few thousand words endlessly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from whoosh.analysis import Token, Tokenizer
from whoosh.lang.porter2 import stem as _porter2

_RUN = re.compile(r"[^\W_]+")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]+")
_MAX_WORD = 40
"""Longer runs are ids, hashes or base64, never words anyone searches for."""

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "did",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "it's",
        "me",
        "my",
        "mine",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "please",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "i'm",
        "i'd",
        "i've",
        "let",
        "let's",
        "want",
        "need",
        "just",
        "some",
        "any",
        "all",
        "also",
        "via",
        "using",
        "use",
        "used",
    ]
)


@dataclass(frozen=True, slots=True)
class Term:
    surface: str
    """The word as written, lowercased: what a UI highlights."""
    stem: str


_stems: dict[str, str] = {}


def stem(word: str) -> str:
    found = _stems.get(word)
    if found is None:
        found = _porter2(word) if word.isascii() and word.isalpha() else word
        if len(_stems) < 200_000:
            _stems[word] = found
    return found


def words(text: str) -> Iterator[str]:
    """Lowercased words, with identifiers split at ``_ - .`` and camelCase boundaries."""
    for run in _RUN.findall(text):
        if len(run) > _MAX_WORD:
            continue
        if run.islower() or run.isupper() or not run.isascii():
            if not run.isdigit() or len(run) <= 4:
                yield run.lower()
            continue
        for part in _HUMPS.findall(run):
            yield part.lower()


def terms(text: str) -> list[Term]:
    """Content words with their stems; stop words dropped."""
    return [Term(w, stem(w)) for w in words(text) if w not in STOP_WORDS]


def stems(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOP_WORDS]


class ToolTextTokenizer(Tokenizer):  # type: ignore[misc]
    """The same analysis as a Whoosh tokenizer, so the on-disk Whoosh index and the in-memory
    postings agree on every term."""

    def __call__(  # type: ignore[no-untyped-def]
        self,
        value,
        positions=False,
        chars=False,
        keeporiginal=False,
        removestops=True,
        start_pos=0,
        start_char=0,
        tokenize=True,
        mode="",
        **kwargs,
    ):
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for pos, term in enumerate(stems(value), start_pos):
            token.text = term
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = pos
            yield token
