"""What of a tool gets indexed, in which field, and how much of it.

Servers send anything from one line to a megabyte of description and schema; the index reads
a capped amount of each field so one hostile or bloated server cannot stall indexing or drown
the other tools' scores.
"""

from __future__ import annotations

import hashlib
import marshal
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bassi.core.tools import ToolInfo

FIELDS = ("name", "server", "summary", "description", "params")
"""Field order is the column order of the postings arrays and of the on-disk cache."""

SUMMARY_CHARS = 300
DESCRIPTION_CHARS = 4_000
PARAMS_CHARS = 3_000
_MAX_PARAMS = 60
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def summary(description: str) -> str:
    """The first sentence: where a tool says what it does, before usage notes."""
    head = description[:SUMMARY_CHARS].strip()
    match = _SENTENCE_END.search(head)
    return head[: match.start()] if match else head


def _param_texts(schema: Mapping[str, Any], depth: int = 0) -> Iterator[str]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for count, (name, spec) in enumerate(properties.items()):
        if count >= _MAX_PARAMS:
            return
        yield str(name)
        if not isinstance(spec, Mapping):
            continue
        description = spec.get("description")
        if isinstance(description, str):
            yield description[:500]
        enum = spec.get("enum")
        if isinstance(enum, list):
            yield " ".join(str(v) for v in enum[:20])
        if depth < 1:
            yield from _param_texts(spec, depth + 1)
            items = spec.get("items")
            if isinstance(items, Mapping):
                yield from _param_texts(items, depth + 1)


def params_text(schema: Mapping[str, Any]) -> str:
    out: list[str] = []
    size = 0
    for text in _param_texts(schema):
        out.append(text)
        size += len(text) + 1
        if size >= PARAMS_CHARS:
            break
    return " ".join(out)[:PARAMS_CHARS]


def field_texts(tool: ToolInfo) -> tuple[str, ...]:
    """The text of each field in ``FIELDS`` order, capped."""
    description = tool.description[:DESCRIPTION_CHARS]
    return (
        f"{tool.name[:200]} {title(tool)}",
        tool.server,
        summary(description),
        description,
        params_text(tool.input_schema),
    )


def title(tool: ToolInfo) -> str:
    """The human title a server may give a tool in its annotations (``title``)."""
    value = (tool.annotations or {}).get("title")
    return value[:200] if isinstance(value, str) else ""


ENCODER_DESCRIPTION_CHARS = 1_000
"""Enough for the sentences the encoder reads; the rest never reaches it."""
ENCODER_SENTENCES = 1
"""Measured against two: the second sentence is mostly usage notes, and junk there (a pasted
licence, filler) would move the whole vector."""
ENCODER_PARAMS = 30
_IDENTIFIER_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")


def _name_words(identifier: str) -> str:
    return " ".join(w.lower() for w in _IDENTIFIER_PARTS.findall(identifier[:200]))


def encoder_text(tool: ToolInfo) -> str:
    """What the sentence encoder reads of a tool: server, name words (and title), the first
    sentence of the description and the parameter names. Parameters were measured in and
    out: they say what a tool acts on ("channel", "recipient") where a terse description does
    not; later sentences are mostly usage notes (``ENCODER_SENTENCES``). A tool with no
    description is still its name's words in plain English."""
    head = tool.description[:ENCODER_DESCRIPTION_CHARS]
    parts = [p for p in map(str.strip, _SENTENCE_END.split(head)) if p]
    sentences = " ".join(parts[:ENCODER_SENTENCES])
    named = " ".join(w for w in (_name_words(tool.name), title(tool)) if w)
    text = f"{tool.server[:100]} {named}: {sentences}"
    properties = tool.input_schema.get("properties")
    if isinstance(properties, Mapping) and properties:
        names = ", ".join(_name_words(str(p)) for p in list(properties)[:ENCODER_PARAMS])
        text = f"{text} Parameters: {names}"
    return text


def definitions_hash(tools: Sequence[ToolInfo]) -> str:
    """A fingerprint of a server's tool definitions: when it is unchanged, the server's part
    of the index (in memory or on disk) is still right. Schemas are serialised with marshal,
    several times faster than JSON on the megabytes some servers send, which matters for
    starting up with 10,000 tools. Format version 0 because later versions write references
    and interning flags that depend on object identity, not content."""
    digest = hashlib.sha256()
    for tool in tools:
        digest.update(marshal.dumps((tool.name, tool.description), 0))
        digest.update(_schema_bytes(tool.input_schema))
    return digest.hexdigest()[:32]


def _schema_bytes(schema: Mapping[str, Any]) -> bytes:
    try:
        return marshal.dumps(schema, 0)  # type: ignore[arg-type]
    except ValueError:  # not plain JSON-shaped data
        return repr(schema).encode("utf-8", "replace")
