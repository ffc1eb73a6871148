"""The one record every part of bassi uses to talk about a tool.

A tool is identified three ways, and all three must resolve to the same record:
``mcp__<server>__<tool>`` (what the model and the CLI see), ``server/tool`` (what people type
and what the benchmarks use) and the bare tool name when it is unique.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

QUALIFIED_PREFIX = "mcp__"
SEPARATOR = "__"
META_SERVER = "bassi"
"""The name under which bassi offers its own meta-tools (tool_search, tool_load, ...)."""

# Claude Code accepts server names of letters, digits, '_' and '-'. A double underscore, or
# one at the end (``evil_``: ``mcp__evil___run`` splits as ``evil`` / ``_run``), would make
# ``mcp__<server>__<tool>`` ambiguous to split, so bassi refuses both.
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Origin(StrEnum):
    IN_PROCESS = "in-process"
    EXTERNAL = "external"


def is_valid_server_name(name: str) -> bool:
    return bool(_SERVER_NAME.match(name)) and SEPARATOR not in name and not name.endswith("_")


def qualified_name(server: str, tool: str) -> str:
    return f"{QUALIFIED_PREFIX}{server}{SEPARATOR}{tool}"


def split_qualified(name: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` -> ``(server, tool)``; None for anything else."""
    if not name.startswith(QUALIFIED_PREFIX):
        return None
    server, sep, tool = name[len(QUALIFIED_PREFIX) :].partition(SEPARATOR)
    if not sep or not server or not tool:
        return None
    return server, tool


def split_reference(name: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` or ``server/tool`` -> ``(server, tool)``; None for a bare name."""
    parts = split_qualified(name)
    if parts is None and "/" in name:
        server, _, tool = name.partition("/")
        parts = (server, tool)
    return parts


def split_tool_name(name: str) -> tuple[str | None, str]:
    """``mcp__server__tool`` -> (server, tool); a built-in tool has no server."""
    return split_qualified(name) or (None, name)


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as its server announced it. Descriptions are kept verbatim: displaying them
    safely is the display layer's job (see ``bassi.core.safe_text``)."""

    server: str
    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] | None = None
    origin: Origin = Origin.EXTERNAL
    _definition_hash: str | None = field(default=None, init=False, repr=False, compare=False)
    _definition_chars: int | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def definition_hash(self) -> str:
        """A digest of everything the server said about the tool (name, description, input
        schema, annotations). A grant made for one definition must not carry over to a
        changed one, and per-definition work (a compiled validator) is cached under it.
        Computed once per record."""
        if self._definition_hash is None:
            canonical = json.dumps(
                {
                    "name": self.name,
                    "description": self.description,
                    "inputSchema": self.input_schema,
                    "annotations": self.annotations,
                },
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
                default=str,
            )
            digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
            object.__setattr__(self, "_definition_hash", digest)
            return digest
        return self._definition_hash

    @property
    def definition_chars(self) -> int:
        """Size of the definition the CLI sends the model for this tool (what the token
        estimate adds up). Computed once per record."""
        if self._definition_chars is None:
            sent = {
                "name": self.qualified_name,
                "description": self.description,
                "input_schema": dict(self.input_schema),
            }
            chars = len(json.dumps(sent, ensure_ascii=False))
            object.__setattr__(self, "_definition_chars", chars)
            return chars
        return self._definition_chars

    @property
    def qualified_name(self) -> str:
        return qualified_name(self.server, self.name)

    @property
    def ref(self) -> str:
        return f"{self.server}/{self.name}"

    @property
    def summary(self) -> str:
        """The description's first non-empty line."""
        for line in self.description.splitlines():
            if line.strip():
                return line.strip()
        return ""

    @classmethod
    def from_mcp(
        cls, server: str, tool: Mapping[str, Any], origin: Origin = Origin.EXTERNAL
    ) -> ToolInfo:
        """Build from an MCP ``Tool`` in its JSON shape (``name``, ``description``,
        ``inputSchema``, ``annotations``), as servers send it and the bench corpus stores it."""
        schema = tool.get("inputSchema") or tool.get("input_schema") or {}
        annotations = tool.get("annotations")
        return cls(
            server=server,
            name=str(tool["name"]),
            description=str(tool.get("description") or ""),
            input_schema=schema if isinstance(schema, Mapping) else {},
            annotations=annotations if isinstance(annotations, Mapping) else None,
            origin=origin,
        )
