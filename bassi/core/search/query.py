"""Reading what a person typed into the search box.

Anything is accepted: the text is never handed to a query parser, so quotes, parentheses,
``AND``/``OR``/``NOT``, wildcards and stray unicode are just characters. Only ``server:NAME``
means something (a filter), and a query that is a tool's name is recognised as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bassi.core.search.entities import replace_entities
from bassi.core.search.vocabulary import Concept, Vocabulary
from bassi.core.tools import split_qualified

MAX_QUERY_CHARS = 2_000
"""Beyond this a query is a pasted document; its start says what is wanted."""
MAX_CONCEPTS = 32
_SERVER = re.compile(r"(?i)(?:^|\s)server:(\S*)")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    """The query without its filters, pasted things (URLs, paths...) replaced by their kind."""
    server: str | None
    concepts: tuple[Concept, ...]
    name_forms: tuple[str, ...]
    """Lowercased ways the whole query could be a tool's name."""


def parse(query: str, vocabulary: Vocabulary, synonym_weight: float) -> ParsedQuery:
    text = query[:MAX_QUERY_CHARS]
    server: str | None = None
    for match in _SERVER.finditer(text):
        server = match.group(1).strip("\"'").lower() or server
    text = _SERVER.sub(" ", text).strip()
    meant = replace_entities(text)
    concepts = vocabulary.concepts(meant, synonym_weight)[:MAX_CONCEPTS]
    return ParsedQuery(meant, server, tuple(concepts), name_forms(text))


def name_forms(text: str) -> tuple[str, ...]:
    """``mcp__s__t``, ``s/t`` or ``t`` as lowercase keys; empty when the text has spaces."""
    candidate = text.strip().strip("`\"'").lower()
    if not candidate or any(c.isspace() for c in candidate):
        return ()
    parts = split_qualified(candidate)
    if parts is not None:
        return (f"{parts[0]}/{parts[1]}",)
    return (candidate,)
