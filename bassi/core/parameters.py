"""A tool's parameters as rows a person can read, from its JSON-schema ``inputSchema``.

Servers write schemas in many ways and some write them wrong; every display of a tool card
(``bassi tools show``, the app's tool card) reads them through this one function, which turns
a malformed schema into fewer rows, never an exception. Values are returned as the server
sent them: displaying them safely is the display layer's job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bassi.core.tools import ToolInfo


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str
    required: bool
    default: str
    """The default as JSON, or "" when there is none."""
    description: str


def parameters(tool: ToolInfo) -> list[Parameter]:
    """The tool's top-level parameters, required ones first; an ``enum``'s choices are
    appended to the description."""
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required_list = tool.input_schema.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    rows = []
    for name, raw in properties.items():
        schema = raw if isinstance(raw, Mapping) else {}
        default = json.dumps(schema["default"], ensure_ascii=False) if "default" in schema else ""
        description = schema.get("description")
        if isinstance(schema.get("enum"), list):
            choices = ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
            description = f"{description or ''} (one of: {choices})".strip()
        rows.append(
            Parameter(
                name=str(name),
                type=type_of(schema),
                required=name in required,
                default=default,
                description=str(description or ""),
            )
        )
    return sorted(rows, key=lambda p: not p.required)


def type_of(schema: Mapping[str, Any]) -> str:
    """A short, readable type for a JSON-schema property."""
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if isinstance(kind, str):
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            return f"array[{type_of(schema['items'])}]"
        return kind
    if isinstance(schema.get("enum"), list):
        return "enum"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return " | ".join(type_of(o) for o in options if isinstance(o, Mapping))
    return "any"
