"""Reading what a person typed into the search box.

Plain words are a request, ranked by meaning and words. A few forms filter instead, in
Whoosh's query language: ``field:value`` for a known field (``server:github``,
``name:create*``, ``readonly:yes``), a quoted phrase, ``NOT`` (or ``-``) before a word or
phrase, and a word with a ``*`` wildcard. Anything else (parentheses, ``AND``, stray
unicode, ``note: buy milk``) is just text. A filter that cannot be read is reported as a
problem, never raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bassi.core.search.entities import replace_entities
from bassi.core.search.records import FIELDS, HINTS
from bassi.core.search.typos import one_edit
from bassi.core.search.vocabulary import Concept, Vocabulary
from bassi.core.tools import split_qualified

MAX_QUERY_CHARS = 2_000
"""Beyond this a query is a pasted document; its start says what is wanted."""
MAX_CONCEPTS = 32

_CLAUSE = re.compile(
    r"""(?P<not>\bNOT\s+|(?<!\S)-(?=\S))?
    (?:(?P<field>[A-Za-z]+):(?P<value>"[^"]*"?|\([^)]*\)?|[^\s()]*)
      |(?P<phrase>"[^"]*"?)
      |(?P<wild>[^\s"()]*\*[^\s"()]*))""",
    re.VERBOSE,
)
_NOT_WORD = re.compile(r"\bNOT\s+(?P<word>[^\s\"()]+)")
_OPERATORS = re.compile(r"(?<!\S)(?:AND|OR)(?!\S)")
_YES = {"yes": "yes", "true": "yes", "y": "yes", "no": "no", "false": "no", "n": "no"}
FILTER_FIELDS = tuple(f for f in FIELDS if f != "server")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    """The free words, pasted things (URLs, paths...) replaced by their kind."""
    server: str | None
    concepts: tuple[Concept, ...]
    name_forms: tuple[str, ...]
    """Lowercased ways the whole query could be a tool's name."""
    filter: str = ""
    """The fielded part, in Whoosh's query language; empty when there is none."""
    problem: str | None = None
    """Why the fielded part cannot be read, for people; None when it can."""
    loose: tuple[str, ...] = ()
    """The phrases and wildcard words, as typed, when they are all the filter there is (no
    field, nothing excluded): in a request ("search the articles for "climate change"") they
    are often what the tool is to work on, not words a tool says, and are read as plain words
    when nothing fits them."""


def parse(
    query: str, vocabulary: Vocabulary, synonym_weight: float, *, literal: bool = False
) -> ParsedQuery:
    """``literal`` reads phrases and wildcard words as plain words (see ``loose``)."""
    text = query[:MAX_QUERY_CHARS]
    server: str | None = None
    clauses: list[str] = []
    loose: list[str] = []
    strict = False
    problem: str | None = None
    free: list[str] = []
    last = 0
    for match in _CLAUSE.finditer(text):
        if literal and match["field"] is None:
            continue
        found = _clause(match)
        if found is None:
            continue
        free.append(text[last : match.start()])
        last = match.end()
        kind, value = found
        if kind == "server":
            server = value or server
            if not value:
                problem = problem or "server: needs a server's name (server:github)"
        elif kind == "problem":
            problem = problem or value
        elif kind == "filter":
            clauses.append(value)
            if match["field"] is None and not match["not"]:
                loose.append(match.group().strip())
            else:
                strict = True
        else:
            free.append(f" {value} ")
    free.append(text[last:])
    rest = " ".join(free)
    if literal:
        rest = rest.replace('"', " ").replace("*", " ")
    clauses += [f"NOT {m['word']}" for m in _NOT_WORD.finditer(rest)]
    rest = _NOT_WORD.sub(" ", rest)
    rest = _OPERATORS.sub(" ", rest) if clauses else rest
    rest = rest.strip()
    meant = replace_entities(rest)
    concepts = vocabulary.concepts(meant, synonym_weight)[:MAX_CONCEPTS]
    return ParsedQuery(
        meant,
        server.strip("\"'").lower() if server else None,
        tuple(concepts),
        name_forms(rest) if not clauses else (),
        " ".join(clauses),
        problem,
        tuple(loose) if loose and not strict else (),
    )


def _clause(match: re.Match[str]) -> tuple[str, str] | None:
    """What one fielded-looking piece is: ("server", name), ("filter", whoosh text),
    ("problem", message), ("text", words to keep as free text), or None to leave it."""
    negated = "NOT " if match["not"] else ""
    if match["phrase"] is not None:
        phrase = match["phrase"]
        if len(phrase) < 2 or not phrase.endswith('"'):
            return "problem", 'a quote is not closed: end the phrase with "'
        if not phrase.strip('"').strip():
            return "text", ""
        return "filter", f"{negated}{phrase}"
    if match["wild"] is not None:
        word = match["wild"]
        if not word.strip("*"):
            return "text", word
        return "filter", f"{negated}{word}"
    field = match["field"].lower()
    value = match["value"]
    if field == "server":
        return ("server", value) if not negated else ("problem", "NOT server: is not supported")
    if field not in FILTER_FIELDS:
        close = [f for f in FIELDS if one_edit(field, f)]
        if close:
            return "problem", f"unknown field '{field}:' (did you mean {close[0]}:?)"
        return None
    if not value:
        return "problem", f"{field}: needs a value ({field}:{_example(field)})"
    if value.startswith('"') and (len(value) < 2 or not value.endswith('"')):
        return "problem", 'a quote is not closed: end the phrase with "'
    if value.startswith("(") and not value.endswith(")"):
        return "problem", f"a parenthesis after {field}: is not closed"
    if field in HINTS:
        answer = _YES.get(value.lower())
        if answer is None:
            return "problem", f"{field}: takes yes or no, not '{value[:40]}'"
        value = answer
    return "filter", f"{negated}{field}:{value}"


def _example(field: str) -> str:
    return "yes" if field in HINTS else "create*"


def name_forms(text: str) -> tuple[str, ...]:
    """``mcp__s__t``, ``s/t`` or ``t`` as lowercase keys; empty when the text has spaces."""
    candidate = text.strip().strip("`\"'").lower()
    if not candidate or any(c.isspace() for c in candidate):
        return ()
    parts = split_qualified(candidate)
    if parts is not None:
        return (f"{parts[0]}/{parts[1]}",)
    return (candidate,)
