"""``bassi tools list|search|show``: the catalog from a shell, for scripts and quick checks.

It runs the same core as the app. When the configuration is unchanged since the servers were
last connected, the answer comes from the cached catalog (``tools-cache.json`` in the user's
cache directory, ``Settings.project_cache_dir``) and no server is started; otherwise, or with
``--refresh``, the servers are connected (each within its own timeout), the answer printed,
the cache written and everything closed again.
A project server the user has not approved is listed as waiting for approval and never
started, from the cache or not (``bassi mcp approve`` approves it), and ``show`` says what
the access policy says of a tool. Whatever a server sent is cleaned of terminal escapes and
printed as plain text, never as Rich markup; ``--json`` prints data.

Exit codes: 0 on success; 1 when ``list`` finds a failed server, ``search`` finds nothing, or
``show`` finds no single tool; 2 for a bad argument (an unknown ``--server``, a filter that
cannot be read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from bassi.core.hints import Hints
from bassi.core.injection import tool_flags
from bassi.core.mcp_config import ConfigProblem, Severity
from bassi.core.parameters import parameters
from bassi.core.policy import Verdict
from bassi.core.registry import Registry, ServerEntry, ServerStatus, ToolNotFoundError
from bassi.core.reveal import reveal
from bassi.core.safe_text import clean, one_line
from bassi.core.settings import Settings
from bassi.core.tools import ToolInfo

if TYPE_CHECKING:
    from bassi.core.catalog import Catalog
    from bassi.core.policy import AccessPolicy
    from bassi.core.search import SearchHit
    from bassi.core.validation import SchemaChecks

_STATUS_STYLE = {
    ServerStatus.PENDING: "yellow",
    ServerStatus.CONNECTED: "green",
    ServerStatus.CONNECTING: "yellow",
    ServerStatus.FAILED: "red",
    ServerStatus.DISABLED: "dim",
}
_MAX_DESCRIPTION = 20_000
"""Characters of a description ``show`` prints; the rest is marked as cut."""

SEMANTIC_WAIT = 15.0
"""Seconds a search waits for tool vectors still being computed before answering lexically."""


def add_tools_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tools = subparsers.add_parser(
        "tools",
        help="list, search and show the tools of every server",
        description="Connect the servers, answer, and exit.",
    )
    actions = tools.add_subparsers(dest="tools_command", required=True)
    listing = actions.add_parser("list", help="every server with its status and tools")
    listing.add_argument("--json", action="store_true", help="print JSON")
    search = actions.add_parser(
        "search",
        help="the tools that best match a query",
        description=(
            "Rank tools by what a request means and says. Filters narrow it down: "
            "server:NAME, name:create*, title:WORD, description:WORD, params:WORD, "
            'readonly:yes, destructive:no, idempotent:yes, openworld:no, "a phrase", NOT word.'
        ),
    )
    search.add_argument("query", nargs="+", help="what the tool should do, or its name")
    search.add_argument("--limit", type=int, default=10, metavar="N", help="at most N results")
    search.add_argument("--server", metavar="S", help="only tools of server S")
    search.add_argument("--explain", action="store_true", help="show why each tool ranks")
    search.add_argument("--json", action="store_true", help="print JSON")
    show = actions.add_parser("show", help="one tool's full card")
    show.add_argument("name", help="mcp__server__tool, server/tool, or a unique tool name")
    show.add_argument("--json", action="store_true", help="print JSON")
    for command in (listing, search, show):
        command.add_argument(
            "--refresh", action="store_true", help="connect the servers, not the cached catalog"
        )


def run_tools_command(args: argparse.Namespace, settings: Settings) -> int:
    out = Console(file=sys.stdout, highlight=False, emoji=False)
    err = Console(file=sys.stderr, highlight=False, emoji=False)
    return asyncio.run(_run(args, settings, out, err))


async def _run(args: argparse.Namespace, settings: Settings, out: Console, err: Console) -> int:
    # Imported here, not at the top: ``bassi --help`` and ``--version`` build this command's
    # parser, and should not wait for the MCP client and the search index to load.
    from bassi.core import catalog_cache
    from bassi.core.catalog import Catalog

    catalog = Catalog(settings)
    for problem in catalog.problems:
        _print_problem(err, problem)
    cached = {} if args.refresh else catalog_cache.load(settings.project_cache_dir)
    if cached and catalog.start_from_cache(cached):
        try:
            return _answer(catalog, args, out, err, settings, cached=True)
        finally:
            await catalog.close()
    async with catalog:
        await catalog.wait_ready()
        catalog.save_cache()
        return _answer(catalog, args, out, err, settings, cached=False)


def _answer(
    catalog: Catalog,
    args: argparse.Namespace,
    out: Console,
    err: Console,
    settings: Settings,
    *,
    cached: bool,
) -> int:
    if args.tools_command == "list":
        return _list(catalog, args.json, out, cached=cached)
    if args.tools_command == "search":
        return _search(catalog, args, out, err)
    from bassi.core.policy import AccessPolicy

    policy = AccessPolicy.load(catalog.registry, settings, catalog.trust)
    return _show(policy, catalog.schemas, args.name, args.json, out, err)


def _print_problem(err: Console, problem: ConfigProblem) -> None:
    label = "warning" if problem.severity is Severity.WARNING else "error"
    err.print(Text(f"{label}: ", style="yellow bold") + Text(clean(str(problem))))


# list


def _list(catalog: Catalog, as_json: bool, out: Console, *, cached: bool) -> int:
    entries = catalog.registry.servers()
    failed = any(e.status is ServerStatus.FAILED for e in entries)
    if as_json:
        servers = [_server_json(e, catalog.registry) for e in entries]
        problems = [_problem_json(p) for p in catalog.problems]
        _print_json({"servers": servers, "problems": problems, "cached": cached})
        return 1 if failed else 0
    for entry in entries:
        out.print(_server_block(entry))
    totals = _totals(entries)
    if cached:
        totals.append(" (as last connected; --refresh reconnects)", style="dim")
    out.print(totals)
    return 1 if failed else 0


def _server_block(entry: ServerEntry) -> RenderableType:
    count = len(entry.tools)
    pending = entry.status is ServerStatus.PENDING
    header = Text.assemble(
        (clean(entry.name), "bold"),
        "  ",
        ("waiting for approval" if pending else entry.status.value, _STATUS_STYLE[entry.status]),
        "  ",
        f"{count} tool{'' if count == 1 else 's'}",
    )
    parts: list[RenderableType] = [header, _indented(Text(one_line(entry.target, 300), "dim"))]
    if pending:
        hint = f"not started; approve it with: bassi mcp approve {clean(entry.name)}"
        parts.append(_indented(Text(hint, style="yellow")))
    if entry.error:
        parts.append(_indented(Text(clean(entry.error, max_chars=2_000), style="red")))
    if entry.tools:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column()
        style = "" if entry.available else "dim"
        for tool in entry.tools:
            name = Text(one_line(tool.name, 80), style=style)
            grid.add_row(name, Text(one_line(tool.description)))
        parts.append(_indented(grid))
    return Group(*parts, Text(""))


def _indented(renderable: RenderableType) -> RenderableType:
    return Padding(renderable, (0, 0, 0, 2), expand=False)


def _totals(entries: Sequence[ServerEntry]) -> Text:
    by_status: dict[str, int] = {}
    for entry in entries:
        by_status[entry.status.value] = by_status.get(entry.status.value, 0) + 1
    states = ", ".join(f"{n} {status}" for status, n in by_status.items())
    tools = sum(len(e.tools) for e in entries)
    return Text(f"{len(entries)} servers ({states}), {tools} tools")


# search


def _search(catalog: Catalog, args: argparse.Namespace, out: Console, err: Console) -> int:
    query = " ".join(args.query)
    server: str | None = args.server
    if server is not None and not _has_server(catalog.registry, server):
        known = ", ".join(e.name for e in catalog.registry.servers())
        err.print(Text(f"unknown server '{clean(server)}'; known servers: {clean(known)}"))
        return 2
    # One-shot: worth a moment for the fused ranking (instant when the vectors are cached).
    catalog.index.wait_semantic(timeout=SEMANTIC_WAIT)
    found = catalog.index.find(query, limit=max(args.limit, 0), server=server)
    if found.problem is not None:
        err.print(Text(f"cannot search: {one_line(found.problem, 300)}"))
        return 2
    waiting = catalog.waiting()
    if args.json:
        hits = [_hit_json(h, catalog.registry, args.explain) for h in found.hits]
        _print_json({"query": query, "hits": hits, "connecting": waiting, "relaxed": found.relaxed})
        return 0 if found.hits else 1
    if waiting:
        err.print(Text(f"still connecting: {clean(', '.join(waiting))}; results may be missing"))
    if found.relaxed:
        err.print(Text(one_line(found.relaxed, 300)))
    if not found.hits:
        err.print(Text(f"no tool matches '{one_line(query)}'"))
        return 1
    grid = Table.grid(padding=(0, 2))
    grid.add_column(justify="right", style="dim")
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right")
    grid.add_column()
    for rank, hit in enumerate(found.hits, 1):
        available = catalog.registry.is_available(hit.tool)
        ref = highlight(clean(hit.tool.ref), hit.matched_terms)
        ref.stylize("bold" if available else "dim")
        if not available:
            ref.append(" (unavailable)", style="dim")
        score = Text(f"{hit.score:.2f}", style="dim")
        if hit.weak:
            score.append(" weak", style="yellow")
        about = highlight(one_line(hit.tool.description), hit.matched_terms)
        if hit.matched_terms:
            about.append(f"  [{', '.join(clean(t) for t in hit.matched_terms)}]", style="dim")
        grid.add_row(f"{rank}.", ref, score, about)
        if args.explain and hit.signals is not None:
            # Under the description: in the name's column (never wrapped) the signals
            # widened it until the descriptions were a word a line.
            for line in hit.signals.lines():
                grid.add_row("", "", "", Text(line, style="dim"))
    out.print(grid)
    return 0


def highlight(text: str, terms: Sequence[str]) -> Text:
    """``text`` (already clean) with the words a search matched in bold."""
    from bassi.core.search.highlight import matched_spans

    result = Text(text)
    for start, end in matched_spans(text, terms):
        result.stylize("bold underline", start, end)
    return result


def _has_server(registry: Registry, name: str) -> bool:
    return any(e.name.lower() == name.lower() for e in registry.servers())


# show


def _show(
    policy: AccessPolicy,
    schemas: SchemaChecks,
    name: str,
    as_json: bool,
    out: Console,
    err: Console,
) -> int:
    registry = policy.registry
    try:
        tool = policy.resolve(name)
    except ToolNotFoundError as exc:
        if as_json:
            _print_json(
                {
                    "error": str(exc),
                    "ambiguous": exc.ambiguous,
                    "candidates": exc.candidates,
                }
            )
        else:
            err.print(Text(clean(str(exc))))
        return 1
    entry = registry.server(tool.server)
    access = policy.allowance(tool)
    clash = policy.clash(tool)
    schema_problem = schemas.problem(tool)
    if as_json:
        _print_json(
            _tool_json(tool, registry)
            | {
                "status": entry.status.value,
                "schema_problem": schema_problem,
                "model_name": policy.model_name(tool),
                "name_clash": clash.describe(tool.server) if clash else None,
                "access": {
                    "verdict": access.verdict.value,
                    "reason": access.reason,
                    "changed": list(access.changed),
                },
                "flags": [{"what": f.what, "excerpt": f.excerpt} for f in tool_flags(tool)],
            }
        )
        return 0
    out.print(_card(tool, entry, policy, schema_problem))
    return 0


_ACCESS = {
    Verdict.ALLOW: ("runs without asking", "green"),
    Verdict.ASK: ("asks before running", "yellow"),
    Verdict.DENY: ("never runs", "red"),
}


def _card(
    tool: ToolInfo, entry: ServerEntry, policy: AccessPolicy, schema_problem: str | None
) -> RenderableType:
    called = policy.model_name(tool) or tool.qualified_name
    title = Text.assemble((reveal(clean(tool.ref)), "bold"), "  ", (reveal(clean(called)), "dim"))
    status = Text.assemble(
        f"server {clean(entry.name)} · {tool.origin.value} · ",
        (entry.status.value, _STATUS_STYLE[entry.status]),
    )
    if not entry.available:
        status.append(" · unavailable", style="red")
    parts: list[RenderableType] = [title, status]
    if schema_problem:
        parts.append(
            Text.assemble(
                ("invalid input schema: ", "bold yellow"),
                (one_line(schema_problem, 300), "yellow"),
                "\nbassi cannot check this tool's calls; they reach the server unchecked.",
            )
        )
    access = policy.allowance(tool)
    what, style = _ACCESS.get(access.verdict, ("asks before running", "yellow"))
    parts.append(Text.assemble((f"{what}: ", style), one_line(access.reason, 300)))
    if clash := policy.clash(tool):
        parts.append(Text(f"cannot be called: {clean(clash.describe(tool.server))}", "red"))
    declared = Hints.of(tool).labels()
    if declared:
        parts.append(Text(f"declares: {', '.join(declared)}", "dim"))
    parts += [Text(f"⚠ its description {clean(str(flag))}", "red") for flag in tool_flags(tool)]
    parts.append(Text(""))
    description = clean(tool.description, max_chars=_MAX_DESCRIPTION).strip()
    parts.append(Text(description or "(no description)"))
    parts.append(Text(""))
    rows = parameters(tool)
    if rows:
        table = Table(show_edge=False, header_style="bold")
        for column in ("name", "type", "required", "default", "description"):
            table.add_column(column, overflow="fold")
        for p in rows:
            table.add_row(
                Text(clean(p.name)),
                Text(one_line(p.type, 60)),
                "yes" if p.required else "no",
                Text(one_line(p.default, 60)),
                Text(clean(p.description, max_chars=500).strip()),
            )
        parts.append(Text("Parameters", style="bold"))
        parts.append(table)
    else:
        parts.append(Text("No parameters.", style="dim"))
    if tool.annotations:
        hints = ", ".join(
            f"{clean(str(k))}: {clean(json.dumps(v, ensure_ascii=False))}"
            for k, v in tool.annotations.items()
        )
        parts.append(Text(""))
        parts.append(Text.assemble(("Annotations: ", "bold"), one_line(hints, 400)))
    return Group(*parts)


# JSON


def _print_json(data: object) -> None:
    """ASCII JSON: every control character from a server arrives escaped, so it is safe on
    a terminal and exact for a program."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def _server_json(entry: ServerEntry, registry: Registry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "origin": entry.origin.value,
        "status": entry.status.value,
        "target": entry.target,
        "error": entry.error,
        "always_load": entry.always_load,
        "tools": [_tool_json(t, registry) for t in entry.tools],
    }


def _problem_json(problem: ConfigProblem) -> dict[str, Any]:
    return {
        "file": str(problem.path),
        "server": problem.server,
        "severity": problem.severity.value,
        "message": problem.message,
    }


def _tool_json(tool: ToolInfo, registry: Registry) -> dict[str, Any]:
    return {
        "server": tool.server,
        "name": tool.name,
        "ref": tool.ref,
        "qualified_name": tool.qualified_name,
        "origin": tool.origin.value,
        "available": registry.is_available(tool),
        "description": tool.description,
        "input_schema": dict(tool.input_schema),
        "annotations": dict(tool.annotations) if tool.annotations else None,
    }


def _hit_json(hit: SearchHit, registry: Registry, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ref": hit.tool.ref,
        "qualified_name": hit.tool.qualified_name,
        "server": hit.tool.server,
        "name": hit.tool.name,
        "score": hit.score,
        "matched_terms": list(hit.matched_terms),
        "weak": hit.weak,
        "summary": hit.tool.summary,
        "available": registry.is_available(hit.tool),
    }
    if explain and hit.signals is not None:
        out["why"] = hit.signals.lines()
    return out
