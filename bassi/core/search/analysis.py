"""Turning tool text and queries into terms.

Tool names glue words together (``list_pull_requests``, ``get-drive-item``, ``driveItemId``)
while people write plain words, so both sides are split the same way: on anything that is not
a letter or digit, and at camelCase humps, then lowercased and stemmed with Whoosh's Porter2
stemmer. Stems are cached because tool text repeats the same few thousand words endlessly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources

from whoosh.lang.porter2 import stem as _porter2

_RUN = re.compile(r"[^\W_]+")
_ASCII_WORDS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Words, also inside identifiers: ``driveItemId`` -> drive, Item, Id; ``HTTPServer`` -> HTTP,
Server; an acronym's plural stays one word (``PRs``, ``URLs``), not ``P`` + ``Rs``."""
_MAX_WORD = 40
"""Longer runs are ids, hashes or base64, never words anyone searches for."""

STOP_WORDS = frozenset(
    line.strip()
    for line in resources.files(__package__)
    .joinpath("stopwords.txt")
    .read_text("utf-8")
    .splitlines()
    if line.strip() and not line.startswith("#")
)


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
        if run.isascii():
            for part in _ASCII_WORDS.findall(run):
                yield part.lower()
        else:
            yield run.lower()


def is_content(word: str) -> bool:
    """Stop words and single letters (the ``s`` of ``Lisa's``) carry no meaning here."""
    return word not in STOP_WORDS and (len(word) > 1 or word.isdigit())


def stems(text: str) -> list[str]:
    """The stems of the content words. Most tool text is ASCII, which one regex splits
    (camelCase included); the cache maps each word straight to its stem, or to "" for words
    that carry no meaning."""
    found = _ASCII_WORDS.findall(text) if text.isascii() else words(text)
    out: list[str] = []
    for word in found:
        key = _content_stems.get(word)
        if key is None:
            key = _content_stem(word)
            if len(_content_stems) < 200_000:
                _content_stems[word] = key
        if key:
            out.append(key)
    return out


_content_stems: dict[str, str] = {}


def _content_stem(word: str) -> str:
    word = word.lower()
    if not is_content(word) or len(word) > _MAX_WORD or (word.isdigit() and len(word) > 4):
        return ""
    return stem(word)
