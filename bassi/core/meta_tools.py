"""bassi's own MCP server, ``bassi``: the tools the model uses to find and load other tools.

In progressive mode these four are nearly all the model sees at first, so every word of their
definitions and answers is paid for in tokens on every request: descriptions are short and a
search answers one compact line per tool.

``tool_search`` loads its top confident results as it answers (as Claude Code's own tool search
does), so a tool the model did not have is callable after a single meta-tool call: the
model's next request already lists it. Weak matches are listed as such and never loaded: a
wrong tool in the model's hands costs tokens and invites a wrong call. ``tool_load`` does the
same for exact names.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from bassi.core.exposure import CHARS_PER_TOKEN
from bassi.core.parameters import summary
from bassi.core.policy import AccessPolicy
from bassi.core.registry import ToolNotFoundError
from bassi.core.safe_text import clean, one_line
from bassi.core.tools import META_SERVER, ToolInfo, qualified_name

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext

    from bassi.core.bridge import CallTracker

SERVER_NAME = META_SERVER
SELECT_PREFIX = "select:"
LINE_TOKENS = 60
"""Most a search result line may cost (characters / 4)."""
LOAD_TOP = 3
"""How many of a search's best confident results it loads: enough that the right tool is
usually among them, few enough that the next request stays small."""
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
DESCRIBE_MAX_CHARS = 8_000
SCHEMA_MAX_CHARS = 16_000


class HitLike(Protocol):
    @property
    def tool(self) -> ToolInfo: ...

    @property
    def weak(self) -> bool: ...


class Searcher(Protocol):
    """What tool_search needs of the index: the same search `/tools search` uses."""

    def search(
        self, query: str, *, limit: int = 10, server: str | None = None
    ) -> Sequence[HitLike]: ...


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    is_error: bool = False


Changed = Callable[[], Awaitable[None]]
"""Called after the exposed set grew, so the CLI lists the affected servers again before the
meta-tool returns: that is what makes a loaded tool callable in the same turn."""


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOLS: list[dict[str, Any]] = [
    dict(
        name="tool_search",
        description=(
            "Find tools for a task among all connected servers (most are not loaded yet). "
            "Answers ranked 'server/tool — summary' lines and loads the top results, so you "
            "can call them at once as mcp__<server>__<tool>. Query: a few words about the "
            "task, or 'select:name1,name2' to load exact names."
        ),
        input_schema=_schema(
            {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            },
            ["query"],
        ),
    ),
    dict(
        name="tool_describe",
        description="Full description and input schema of one tool.",
        input_schema=_schema({"name": {"type": "string"}}, ["name"]),
    ),
    dict(
        name="tool_load",
        description="Load tools by exact name so you can call them in this conversation.",
        input_schema=_schema({"names": {"type": "array", "items": {"type": "string"}}}, ["names"]),
    ),
    dict(
        name="tool_active",
        description="List the tools loaded now.",
        input_schema=_schema({}, []),
    ),
]
"""The meta-tools' definitions (``mcp.types.Tool`` fields): plain data, so that knowing
their names costs no import of ``mcp``, which bassi's start must not wait for."""
META_TOOL_NAMES = frozenset(qualified_name(SERVER_NAME, t["name"]) for t in TOOLS)


class MetaTools:
    """Every answer names tools as the model must call them (``AccessPolicy.model_name``),
    and every load goes through the policy's visible half."""

    def __init__(self, policy: AccessPolicy, index: Searcher, *, changed: Changed) -> None:
        self._policy = policy
        self._registry = policy.registry
        self._exposure = policy.exposure
        self._index = index
        self._changed = changed

    def server(self, visible: Callable[[], bool], tracker: CallTracker) -> Server[Any]:
        """The MCP server the CLI talks to. ``visible`` says whether the meta-tools are
        listed now (they are pointless when every tool is already exposed)."""
        from mcp import types
        from mcp.server import Server

        tools = [types.Tool(**t) for t in TOOLS]

        async def list_tools(
            _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=tools if visible() else [])

        async def call_tool(
            _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            with tracker.running(SERVER_NAME):
                answer = await self.call(params.name, params.arguments or {})
            return types.CallToolResult(
                content=[types.TextContent(text=answer.text)], is_error=answer.is_error
            )

        return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)

    async def call(self, name: str, arguments: dict[str, Any]) -> Answer:
        if name == "tool_search":
            return await self.search(arguments.get("query"), arguments.get("limit"))
        if name == "tool_describe":
            return self.describe(arguments.get("name"))
        if name == "tool_load":
            return await self.load(arguments.get("names"))
        if name == "tool_active":
            return self.active()
        return Answer(f"Unknown tool '{name}'. bassi offers: {_meta_list()}.", is_error=True)

    async def search(self, query: object, limit: object = None) -> Answer:
        if not isinstance(query, str) or not query.strip():
            return Answer("Give 'query': a few words describing the task.", is_error=True)
        if query.strip().lower().startswith(SELECT_PREFIX):
            return await self.load(query.strip()[len(SELECT_PREFIX) :])
        count = _limit(limit)
        found = [
            h
            for h in self._index.search(query, limit=count + 5)
            if self._exposure.denied_by(h.tool) is None
        ][:count]
        if not found:
            return Answer(
                f"No tools match '{one_line(query, 80)}'. Try other or fewer words "
                "(what the tool does, not how)."
            )
        hits = [h.tool for h in found]
        weak = {h.tool.qualified_name for h in found if h.weak}
        if len(weak) == len(found):
            lines = [
                _result_line(self._policy.model_ref(t), t, "weak match, not loaded") for t in hits
            ]
            return Answer(
                "\n".join(
                    [
                        f"Nothing fits '{one_line(query, 80)}' well. Closest, not loaded "
                        "(load one with tool_load if it is right, or search other words):",
                        *lines,
                    ]
                )
            )
        usable = [
            t for t in hits if t.qualified_name not in weak and self._registry.is_available(t)
        ]
        self._exposure.load(usable[:LOAD_TOP])
        await self._changed()
        loaded = [t for t in hits if self._exposure.reason(t) is not None]
        lines = [
            _result_line(
                self._policy.model_ref(t),
                t,
                self._line_mark(t) or ("weak" if t.qualified_name in weak else ""),
            )
            for t in hits
        ]
        if loaded:
            head = (
                f"{len(loaded)} of {len(hits)} loaded now, call them as "
                "mcp__<server>__<tool>; load others with tool_load."
            )
        else:
            head = "None of these can be loaded now."
        return Answer("\n".join([head, *lines]))

    def describe(self, name: object) -> Answer:
        if not isinstance(name, str) or not name.strip():
            return Answer("Give 'name': the tool's name.", is_error=True)
        try:
            tool = self._policy.resolve(name)
        except ToolNotFoundError as exc:
            return Answer(_not_found(exc), is_error=True)
        if rule := self._exposure.denied_by(tool):
            # Denied tools are hidden from the model: their name, never what they say.
            return Answer(f"{self._called(tool)} is not allowed (denied by {rule}).")
        state = self._line_mark(tool) or "not loaded: load it with tool_load"
        schema = json.dumps(dict(tool.input_schema), ensure_ascii=False, separators=(",", ":"))
        return Answer(
            f"{self._called(tool)} ({state})\n"
            f"{clean(tool.description, max_chars=DESCRIBE_MAX_CHARS)}\n"
            f"{summary(tool)}\n"
            f"Input schema: {clean(schema, max_chars=SCHEMA_MAX_CHARS)}"
        )

    async def load(self, names: object) -> Answer:
        wanted = _names(names)
        if not wanted:
            return Answer("Give 'names': a list of tool names.", is_error=True)
        loaded: list[ToolInfo] = []
        problems: list[str] = []
        for name in wanted:
            try:
                tool = self._policy.resolve(name)
            except ToolNotFoundError as exc:
                problems.append(_not_found(exc))
                continue
            called = self._called(tool)
            if rule := self._exposure.denied_by(tool):
                problems.append(f"{called} is not allowed (denied by {rule}).")
            elif clash := self._policy.clash(tool):
                problems.append(f"{called} cannot be called: {clash.describe(tool.server)}.")
            elif not self._registry.is_available(tool):
                entry = self._registry.server(tool.server)
                why = f": {one_line(entry.error, 120)}" if entry.error else ""
                problems.append(f"{called}: server is {entry.status}{why}.")
            else:
                self._exposure.load([tool])
                loaded.append(tool)
        if loaded:
            await self._changed()
        lines = []
        if loaded:
            lines.append("Loaded, callable now: " + ", ".join(self._called(t) for t in loaded))
        return Answer("\n".join(lines + problems), is_error=not loaded)

    def active(self) -> Answer:
        tools = self._exposure.tools()
        if not tools:
            return Answer("No tools are loaded. Find some with mcp__bassi__tool_search.")
        lines = [f"{self._called(t)} ({self._exposure.reason(t)})" for t in tools]
        return Answer(f"{len(tools)} tools loaded:\n" + "\n".join(lines))

    def _called(self, tool: ToolInfo) -> str:
        """The name the model calls ``tool`` by (its own, when it has no usable one)."""
        return one_line(self._policy.model_name(tool) or tool.qualified_name, 200)

    def _line_mark(self, tool: ToolInfo) -> str:
        if self._exposure.denied_by(tool):
            return "not allowed"
        if self._policy.clash(tool):
            return "name clash: cannot be called"
        if not self._registry.is_available(tool):
            return "server unavailable"
        return "loaded" if self._exposure.reason(tool) is not None else ""


def _result_line(ref: str, tool: ToolInfo, mark: str) -> str:
    """``server/tool — summary [mark]`` within LINE_TOKENS: the summary gives way first."""
    suffix = f" [{mark}]" if mark else ""
    head = f"{one_line(ref, 160)}"
    room = LINE_TOKENS * CHARS_PER_TOKEN - len(head) - len(suffix) - len(" — ")
    summary = one_line(tool.description, room) if room >= 10 else ""
    return f"{head} — {summary}{suffix}" if summary else f"{head}{suffix}"


def _not_found(exc: ToolNotFoundError) -> str:
    name = one_line(exc.name, 120)
    if exc.ambiguous:
        return f"'{name}' is ambiguous; use one of: {', '.join(exc.candidates)}."
    if exc.candidates:
        return f"No tool '{name}'. Closest: {', '.join(exc.candidates)}."
    return f"No tool '{name}'. Search with mcp__bassi__tool_search."


def _names(value: object) -> list[str]:
    """Names as a list, or one comma-separated string (models send both)."""
    items: list[object] = []
    if isinstance(value, str):
        items.extend(value.split(","))
    elif isinstance(value, list):
        items.extend(value)
    return [i.strip() for i in items if isinstance(i, str) and i.strip()]


def _limit(value: object) -> int:
    try:
        number = int(value) if isinstance(value, int | float | str) else DEFAULT_LIMIT
    except ValueError:
        number = DEFAULT_LIMIT
    return max(1, min(MAX_LIMIT, number))


def _meta_list() -> str:
    return ", ".join(sorted(META_TOOL_NAMES))
