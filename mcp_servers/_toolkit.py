"""What every shipped server shares: declaring tools, turning failures into error results, and
serving over stdio.

The servers are plain lowlevel ``mcp.server.Server`` objects because that is the one shape that
works everywhere bassi needs it: the Agent SDK's in-process bridge calls ``Server.run`` over
memory streams, ``mcp.Client`` connects to it in process, and ``stdio_server`` serves it to any
other client.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, ConfigDict, ValidationError

from bassi import __version__

logger = logging.getLogger(__name__)


class ToolArgs(BaseModel):
    """Base for tool arguments: unknown names are refused, so a misspelt argument is reported
    instead of silently ignored."""

    model_config = ConfigDict(extra="forbid")


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


class ToolFailure(Exception):
    """Raised by a tool handler for an expected failure; its message is what the model reads."""


@dataclass(frozen=True)
class ToolSpec(Generic[ArgsT]):
    name: str
    description: str
    args: type[ArgsT]
    handler: Callable[[ArgsT], Awaitable[types.CallToolResult]]
    annotations: types.ToolAnnotations | None = None

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=compact_schema(self.args.model_json_schema()),
            annotations=self.annotations,
        )

    async def call(self, arguments: Mapping[str, Any]) -> types.CallToolResult:
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


def text_result(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def build_server(name: str, instructions: str, tools: Sequence[ToolSpec[Any]]) -> Server[Any]:
    by_name = {tool.name: tool for tool in tools}
    listing = types.ListToolsResult(tools=[tool.to_mcp() for tool in tools])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            known = ", ".join(by_name)
            return text_result(
                f"Unknown tool {params.name!r}; server {name!r} has: {known}", error=True
            )
        return await tool.call(params.arguments or {})

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(factory: Callable[[Path], Server[Any]]) -> None:
    """The body of each ``python -m mcp_servers.<name>``: serve a fresh server on stdin/stdout
    until the client closes the connection. The project directory is the first argument, or
    the working directory the client started the server in."""
    project_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    if not project_dir.is_dir():
        sys.exit(f"{sys.argv[0]}: project directory {project_dir} does not exist")
    server = factory(project_dir)

    async def serve() -> None:
        stopped_by: list[int] = []
        async with stdio_server() as (read_stream, write_stream):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_stop_on_signal, tasks.cancel_scope, stopped_by)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tasks.cancel_scope.cancel()
            if stopped_by:
                # Running tools were cancelled and have killed what they started. Leaving
                # stdio_server() would now wait for its stdin reader thread, which only a
                # client that closes the pipe can release: exit at once instead.
                sys.stderr.flush()
                os._exit(128 + stopped_by[0])

    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    anyio.run(serve)


async def _stop_on_signal(scope: anyio.CancelScope, stopped_by: list[int]) -> None:
    """Turn SIGTERM, SIGINT and SIGHUP into cancellation, so running tools get to clean up
    (kill the process groups they started) instead of the server dying around them."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            stopped_by.append(signum)
            scope.cancel()
            return


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
