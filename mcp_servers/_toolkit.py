"""What every shipped server shares: declaring tools, turning failures into error results, and
reading limits from the environment.

Nothing here imports the MCP library. A server is declared as a ``ServerDefinition``: plain
Python objects that bassi lists and calls directly in its own process (its first screen shows
them connected without waiting for ``mcp``, about a second to import), and that
``mcp_servers._serving`` turns into a lowlevel ``mcp.server.Server`` for every other client
(``python -m mcp_servers.<name>`` over stdio, mcp's in-memory transport in tests).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

logger = logging.getLogger(__name__)


class ToolArgs(BaseModel):
    """Base for tool arguments: unknown names are refused, so a misspelt argument is reported
    instead of silently ignored."""

    model_config = ConfigDict(extra="forbid")


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


class ToolFailure(Exception):
    """Raised by a tool handler for an expected failure; its message is what the model reads."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a shipped tool answers: text for the model, marked as an error or not."""

    text: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    name: str
    description: str
    args: type[ArgsT]
    handler: Callable[[ArgsT], Awaitable[ToolOutput]]
    annotations: Mapping[str, Any] | None = None
    """MCP tool annotations as they go on the wire (``title``, ``readOnlyHint``, ...)."""

    def definition(self) -> dict[str, Any]:
        """The tool as MCP's ``tools/list`` spells it."""
        listed: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": compact_schema(self.args.model_json_schema()),
        }
        if self.annotations:
            listed["annotations"] = dict(self.annotations)
        return listed

    async def call(self, arguments: Mapping[str, Any]) -> ToolOutput:
        try:
            args = self.args.model_validate(dict(arguments))
        except ValidationError as exc:
            return text_result(f"Invalid arguments for {self.name}: {_describe(exc)}", error=True)
        try:
            return await self.handler(args)
        except ToolFailure as exc:
            return text_result(str(exc), error=True)
        except Exception as exc:
            logger.exception("tool %s failed", self.name)
            return text_result(f"{self.name} failed: {type(exc).__name__}: {exc}", error=True)


@dataclass(frozen=True)
class ServerDefinition:
    """One shipped server: its name, what it is for, and its tools."""

    name: str
    instructions: str
    tools: Sequence[ToolSpec[Any]]

    def tool(self, name: str) -> ToolSpec[Any] | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run ``tool``; an unknown name is an error result that lists the known ones."""
        spec = self.tool(tool)
        if spec is None:
            known = ", ".join(t.name for t in self.tools)
            return text_result(
                f"Unknown tool {tool!r}; server {self.name!r} has: {known}", error=True
            )
        return await spec.call(arguments)


def text_result(text: str, *, error: bool = False) -> ToolOutput:
    return ToolOutput(text, is_error=error)


def env_number(env: Mapping[str, str] | None, name: str, default: float) -> float:
    """A positive number from the environment; anything else keeps the default (with a warning)
    because a mistyped variable must not stop bassi from starting."""
    raw = (os.environ if env is None else env).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        logger.warning("ignoring %s=%r: expected a positive number; using %s", name, raw, default)
        return default
    return value


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


def env_flag(env: Mapping[str, str] | None, name: str) -> bool:
    """A yes/no switch from the environment. Anything unrecognised counts as no (with a
    warning): a switch that lifts a protection must be set on purpose."""
    raw = (os.environ if env is None else env).get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw not in _FALSE:
        logger.warning("ignoring %s=%r: expected 1 or 0; using 0", name, raw)
    return False


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated titles and spell ``X | None = None`` as plain optional ``X``:
    the same contract in fewer tokens, which matters when the model sees every tool."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        variants = prop.get("anyOf")
        if prop.get("default", 0) is None and isinstance(variants, list):
            kept = [v for v in variants if v != {"type": "null"}]
            if len(kept) == 1:
                del prop["anyOf"], prop["default"]
                prop.update(kept[0])
    return schema


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)
