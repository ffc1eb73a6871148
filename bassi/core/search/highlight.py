"""Where a tool's text shows the words a search matched, so people see why it matched."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+")
"""Words, with `_` as a separator too, so tool names like `list_mail_messages` split."""


def matched_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """(start, end) of every word of ``text`` that matches a term: a word matches when it
    starts with the term, or is a stem of it ("email" for "emails")."""
    wanted = [t.lower() for t in terms if t.strip()]
    if not wanted:
        return []
    out = []
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if any(word.startswith(t) or (len(word) >= 4 and t.startswith(word)) for t in wanted):
            out.append((match.start(), match.end()))
    return out
