"""What of a tool gets indexed, in which field, and how much of it.

Servers send anything from one line to a megabyte of description and schema; the index reads
a capped amount of each field so one hostile or bloated server cannot stall indexing or drown
the other tools' scores.
"""

from __future__ import annotations

import hashlib
import json
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
        tool.name[:200],
        tool.server,
        summary(description),
        description,
        params_text(tool.input_schema),
    )


def definitions_hash(tools: Sequence[ToolInfo]) -> str:
    """A fingerprint of what the index reads from a server's tools: when it is unchanged, the
    server's part of the index (in memory or on disk) is still right."""
    digest = hashlib.blake2b(digest_size=16)
    for tool in tools:
        digest.update(tool.name.encode("utf-8", "replace"))
        digest.update(b"\0")
        digest.update(tool.description[:DESCRIPTION_CHARS].encode("utf-8", "replace"))
        digest.update(b"\0")
        digest.update(
            json.dumps(tool.input_schema, sort_keys=True, default=str)[:200_000].encode(
                "utf-8", "replace"
            )
        )
        digest.update(b"\1")
    return digest.hexdigest()
