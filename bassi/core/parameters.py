"""A tool's parameters as rows a person (or the model) can read, from its ``inputSchema``.

Servers write schemas in many ways and some write them wrong; every display of a tool's
parameters (``bassi tools show``, the app's tool card, ``tool_describe``, the error a refused
call gets) reads them through this module, which turns a malformed schema into fewer rows,
never an exception.

Nested fields are rows of their own, named by their path as the validation errors name them:
``filter.since`` for a field of an object, ``items[].name`` for a field of the objects in an
array. Local ``$ref``s (``#/$defs/...``, as pydantic and zod write them) are followed, so a
model's fields show up instead of "any". Rows are bounded in depth and number: a schema with
thousands of fields must not flood the card or the model's context.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import unquote

from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo

MAX_NESTING = 4
"""Levels of nested objects expanded below the top-level parameters."""
MAX_ROWS = 200
"""Rows ``parameters`` returns at most; enough for any honest tool."""
SUMMARY_ROWS = 40
"""Rows ``summary`` writes by default."""
SUMMARY_DESCRIPTION_CHARS = 100
_MAX_REF_HOPS = 8


@dataclass(frozen=True)
class Parameter:
    name: str
    """The parameter's path: ``query``, ``filter.since``, ``items[].name``."""
    type: str
    required: bool
    """Required within the object that holds it."""
    default: str
    """The default as JSON, or "" when there is none."""
    description: str


def parameters(
    tool: ToolInfo, *, max_rows: int = MAX_ROWS, max_nesting: int = MAX_NESTING
) -> list[Parameter]:
    """The tool's parameters, each object's required ones first, nested fields (at most
    ``max_nesting`` levels deep) right after the field that holds them; an ``enum``'s
    choices are appended to the description."""
    root = tool.input_schema
    return list(islice(_rows(root, root, "", 0, max_nesting, frozenset()), max_rows))


def summary(tool: ToolInfo, *, max_rows: int = SUMMARY_ROWS) -> str:
    """The parameters as compact text lines, for the model: what ``tool_describe`` shows and
    what a refused call's error repeats, so the model can fix its arguments at once. When
    the rows do not fit, deeper nesting is left out first: the top-level parameters are the
    ones every call needs."""
    nesting = MAX_NESTING
    rows = parameters(tool, max_rows=max_rows + 1, max_nesting=nesting)
    while len(rows) > max_rows and nesting > 0:
        nesting -= 1
        rows = parameters(tool, max_rows=max_rows + 1, max_nesting=nesting)
    if not rows:
        return "Parameters: none."
    lines = ["Parameters (* = required):"]
    for row in rows[:max_rows]:
        mark = "*" if row.required else ""
        line = f"- {one_line(row.name, 120)}{mark}: {one_line(row.type, 60)}"
        if row.default:
            line += f" = {one_line(row.default, 40)}"
        if row.description:
            line += f" — {one_line(row.description, SUMMARY_DESCRIPTION_CHARS)}"
        lines.append(line)
    if len(rows) > max_rows:
        lines.append("- … more parameters than fit here")
    elif nesting < MAX_NESTING:
        levels = "level" if nesting == 1 else "levels"
        deeper = f"fields nested more than {nesting} {levels} deep" if nesting else "nested fields"
        lines.append(f"- ({deeper} are not listed)")
    return "\n".join(lines)


def type_of(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> str:
    """A short, readable type for a JSON-schema property; local ``$ref``s are followed
    against ``root``."""
    schema = _resolved(schema, root or {})
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if isinstance(kind, str):
        items = schema.get("items")
        if kind == "array" and isinstance(items, Mapping):
            return f"array[{type_of(items, root)}]"
        return kind
    if isinstance(schema.get("enum"), list):
        return "enum"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return " | ".join(type_of(o, root) for o in options if isinstance(o, Mapping))
    return "any"


def _rows(
    schema: Mapping[str, Any],
    root: Mapping[str, Any],
    prefix: str,
    depth: int,
    max_nesting: int,
    refs: frozenset[str],
) -> Iterator[Parameter]:
    """Rows for the properties of the object ``schema``, with ``prefix`` before each name.
    ``refs`` are the ``$ref``s followed on the way here: a recursive schema stops where it
    would repeat itself."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    required_list = schema.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    ordered = sorted(properties.items(), key=lambda item: item[0] not in required)
    for name, raw in ordered:
        resolved, followed = _follow(raw if isinstance(raw, Mapping) else {}, root)
        path = f"{prefix}{name}"
        yield _row(path, resolved, name in required, root)
        if depth >= max_nesting or followed & refs:
            continue
        for suffix, inner, inner_refs in _nested_objects(resolved, root):
            seen = refs | followed
            if not inner_refs & seen:
                yield from _rows(
                    inner, root, f"{path}{suffix}.", depth + 1, max_nesting, seen | inner_refs
                )


def _row(
    path: str, schema: Mapping[str, Any], required: bool, root: Mapping[str, Any]
) -> Parameter:
    default = json.dumps(schema["default"], ensure_ascii=False) if "default" in schema else ""
    description = schema.get("description")
    if isinstance(schema.get("enum"), list):
        choices = ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
        description = f"{description or ''} (one of: {choices})".strip()
    return Parameter(
        name=path,
        type=type_of(schema, root),
        required=required,
        default=default,
        description=str(description or ""),
    )


def _nested_objects(
    schema: Mapping[str, Any], root: Mapping[str, Any]
) -> Iterator[tuple[str, Mapping[str, Any], frozenset[str]]]:
    """The object schema whose fields are rows under this one, with the path suffix that
    leads to it (``""`` for an object, ``"[]"`` for the objects in an array, ``"[][]"`` for
    arrays of arrays) and the ``$ref``s followed to get there. An ``anyOf``/``oneOf`` with
    exactly one object among its options (``Optional[Model]``) counts as that object."""
    suffix = ""
    followed: frozenset[str] = frozenset()
    for _ in range(_MAX_REF_HOPS):
        items = schema.get("items")
        if schema.get("type") != "array" or not isinstance(items, Mapping):
            break
        suffix += "[]"
        schema, refs = _follow(items, root)
        followed |= refs
    if isinstance(schema.get("properties"), Mapping):
        yield suffix, schema, followed
        return
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if not isinstance(options, list):
            continue
        objects = [
            (option, refs)
            for option, refs in (_follow(o, root) for o in options if isinstance(o, Mapping))
            if isinstance(option.get("properties"), Mapping)
        ]
        if len(objects) == 1:
            option, refs = objects[0]
            yield suffix, option, followed | refs
            return


def _resolved(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    return _follow(schema, root)[0]


def _follow(
    schema: Mapping[str, Any], root: Mapping[str, Any]
) -> tuple[Mapping[str, Any], frozenset[str]]:
    """``schema`` with a local ``$ref`` (or a lone ``allOf`` member) replaced by what it
    points to, and the refs followed; the keywords beside a ``$ref`` win (a description next
    to a ref)."""
    followed: set[str] = set()
    for _ in range(_MAX_REF_HOPS):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = _pointer(root, ref)
            if target is None:
                break
            followed.add(ref)
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            schema = {**all_of[0], **{k: v for k, v in schema.items() if k != "allOf"}}
            continue
        break
    return schema, frozenset(followed)


def _pointer(root: Mapping[str, Any], ref: str) -> Mapping[str, Any] | None:
    """The subschema a local JSON-pointer ``$ref`` (``#/$defs/Item``) names, or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for token in ref[2:].split("/"):
        key = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node if isinstance(node, Mapping) else None
