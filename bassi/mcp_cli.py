"""``bassi mcp list|get|login|logout|approve``: the server manager from a shell.

``list`` and ``get`` connect the servers as the app does and report each one: transport,
command or URL (secrets masked), status, what it offers, the last error with its stderr tail.
``list`` does not start a server that is disabled or whose last start failed with the same
command or URL; it shows the remembered reason instead (``/mcp`` reconnect tries again).
``login`` runs the browser sign-in (the URL is printed too, for a machine without a browser)
and ``logout`` forgets the tokens.

``approve`` approves a project's own servers and permission rules. It starts nothing:
approving only records, in the user's own bassi directory, that the named servers (as they
are configured now) may start and that the project's allow rules count.

Exit codes: 0 on success; 1 when ``list``/``get`` finds a failed server or a sign-in fails;
2 for an unknown server, a server that has nothing to sign in to, or a name ``approve``
does not know.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import webbrowser
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.text import Text

from bassi.core.mcp_config import HttpServerConfig
from bassi.core.registry import ServerEntry, ServerStatus
from bassi.core.reveal import reveal
from bassi.core.safe_text import clean, one_line
from bassi.core.settings import Settings
from bassi.core.tools import Origin
from bassi.core.trust import Standing
from bassi.tools_cli import _indented, _print_json, _print_problem
from bassi.ui.wording import STATUS_STYLE, counted

if TYPE_CHECKING:
    from bassi.core.catalog import Catalog
    from bassi.core.permissions import RulesSource
    from bassi.core.trust import PendingServer


def add_mcp_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="see and manage the MCP servers: list, get, login, logout, approve",
        description="The servers of .mcp.json and bassi's own, as the app's /mcp shows them.",
    )
    actions = mcp.add_subparsers(dest="mcp_command", required=True)
    listing = actions.add_parser("list", help="every server with its status and what it offers")
    listing.add_argument("--json", action="store_true", help="print JSON")
    get = actions.add_parser("get", help="one server in full: tools, prompts, resources")
    get.add_argument("name", help="the server's name in .mcp.json")
    get.add_argument("--json", action="store_true", help="print JSON")
    login = actions.add_parser("login", help="sign in to an HTTP server (opens a browser)")
    login.add_argument("name")
    logout = actions.add_parser("logout", help="forget the sign-in of an HTTP server")
    logout.add_argument("name")
    approve = actions.add_parser(
        "approve",
        help="let this project's servers start and its allow rules count",
        description=(
            "Without arguments, show what waits for approval. A project's servers start and "
            "its .claude/settings*.json allow rules count only once you approve them."
        ),
    )
    approve.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="a server, or a settings file such as .claude/settings.json",
    )
    approve.add_argument("--all", action="store_true", help="approve everything that waits")


def run_mcp_command(args: argparse.Namespace, settings: Settings) -> int:
    out = Console(file=sys.stdout, highlight=False, emoji=False)
    err = Console(file=sys.stderr, highlight=False, emoji=False)
    if args.mcp_command == "approve":
        return _approve(settings, list(args.names), args.all, out, err)
    return asyncio.run(_run(args, settings, out, err))


async def _run(args: argparse.Namespace, settings: Settings, out: Console, err: Console) -> int:
    from bassi.core.catalog import Catalog

    catalog = Catalog(settings)
    for problem in catalog.problems:
        _print_problem(err, problem)
    command = args.mcp_command
    if command == "list":
        return await mcp_list(catalog, args.json, out)
    known = catalog.server_names()
    if args.name not in known:
        err.print(Text(f"unknown server '{clean(args.name)}'; known: {', '.join(known)}"))
        return 2
    if command == "get":
        return await mcp_get(catalog, args.name, args.json, out)
    if command == "login":
        return await mcp_login(catalog, args.name, out, err)
    return mcp_logout(catalog, args.name, out, err)


async def mcp_list(catalog: Catalog, as_json: bool, out: Console) -> int:
    try:
        await catalog.start(skip_known_failures=True)
        await catalog.wait_ready()
        entries = catalog.registry.servers()
        if as_json:
            _print_json({"servers": [server_json(catalog, e) for e in entries]})
        else:
            for entry in entries:
                out.print(_block(catalog, entry, full=False))
    finally:
        await catalog.close()
    return 1 if any(e.status is ServerStatus.FAILED for e in entries) else 0


async def mcp_get(catalog: Catalog, name: str, as_json: bool, out: Console) -> int:
    try:
        await catalog.start(only={name})
        await catalog.wait_ready()
        entry = catalog.registry.server(name)
        if as_json:
            _print_json(server_json(catalog, entry, full=True))
        else:
            out.print(_block(catalog, entry, full=True))
    finally:
        await catalog.close()
    return 1 if entry.status is ServerStatus.FAILED else 0


async def mcp_login(catalog: Catalog, name: str, out: Console, err: Console) -> int:
    from bassi.core.oauth import SignInError

    try:
        spec = catalog.http_config(name)
    except ValueError as exc:
        err.print(Text(str(exc)))
        return 2

    async def open_url(url: str) -> None:
        out.print(Text("Sign in to ") + Text(name, "bold") + Text(" in your browser:"))
        out.print(Text(url), soft_wrap=True)
        await asyncio.to_thread(webbrowser.open, url)

    try:
        await catalog.oauth.sign_in(spec, open_url)
    except SignInError as exc:
        err.print(Text(f"sign-in to '{name}' failed: {clean(str(exc))}", style="red"))
        return 1
    try:
        await catalog.start(only={name})
        await catalog.wait_ready()
        entry = catalog.registry.server(name)
    finally:
        await catalog.close()
    if entry.status is not ServerStatus.CONNECTED:
        err.print(Text(f"signed in, but '{name}' did not connect: {clean(entry.error or '')}"))
        return 1
    out.print(Text(f"Signed in to {name}: {counted(len(entry.tools), 'tool')}."))
    return 0


def mcp_logout(catalog: Catalog, name: str, out: Console, err: Console) -> int:
    try:
        spec = catalog.http_config(name)
    except ValueError as exc:
        err.print(Text(str(exc)))
        return 2
    if catalog.oauth.sign_out(spec):
        out.print(Text(f"Signed out of {name}; its tokens are deleted."))
    else:
        out.print(Text(f"{name} had no sign-in."))
    return 0


def _approve(
    settings: Settings, names: list[str], everything: bool, out: Console, err: Console
) -> int:
    # Imported here: ``bassi --help`` builds this parser and should not load the MCP client.
    from bassi.core.catalog import Catalog
    from bassi.core.policy import AccessPolicy

    catalog = Catalog(settings)
    for problem in catalog.problems:
        err.print(Text("warning: ", style="yellow bold") + Text(clean(str(problem))))
    policy = AccessPolicy.load(catalog.registry, settings, catalog.trust)
    servers = {p.name: p for p in catalog.pending()}
    rules = {s.name: s for s in policy.pending_rules()}
    if not names and not everything:
        return _show_pending(settings, servers, rules, out)
    unknown = [n for n in names if n not in rules and catalog.config_for(n) is None]
    if unknown:
        listed = clean(", ".join(unknown))
        err.print(Text(f"bassi: not a server or settings file of this project: {listed}"))
        return 2
    chosen = set(servers) | set(rules) if everything else set(names)
    approved = catalog.approve([n for n in chosen if catalog.config_for(n) is not None])
    for name in sorted(chosen & set(rules)):
        catalog.trust.approve_rules(name, rules[name].allow_patterns)
        approved.append(name)
    if approved:
        out.print(Text(f"Approved: {clean(', '.join(approved))}."))
    else:
        out.print(Text("Nothing to approve: these were approved already."))
    return 0


def _show_pending(
    settings: Settings,
    servers: Mapping[str, PendingServer],
    rules: Mapping[str, RulesSource],
    out: Console,
) -> int:
    if not servers and not rules:
        out.print(Text(f"Nothing in {settings.project_dir} waits for approval."))
        return 0
    for pending in servers.values():
        changed = pending.standing is Standing.CHANGED
        standing = "changed since you approved it" if changed else "new"
        out.print(Text.assemble((clean(pending.name), "bold"), " (", (standing, "yellow"), ")"))
        out.print(Text(f"  runs {clean(reveal(pending.target))}"))
        for line in pending.details:
            out.print(Text(f"    {clean(reveal(line))}"))
    for source in rules.values():
        out.print(Text.assemble((clean(source.name), "bold"), " lets these run without asking:"))
        for pattern in source.allow_patterns:
            out.print(Text(f"  {clean(pattern)}"))
    out.print(Text("Approve with: bassi mcp approve NAME ... or bassi mcp approve --all"))
    return 0


def transport(catalog: Catalog, entry: ServerEntry) -> str:
    config = catalog.config_for(entry.name)
    if entry.origin is Origin.IN_PROCESS or config is None:
        return "in-process"
    return config.type


def server_json(catalog: Catalog, entry: ServerEntry, *, full: bool = False) -> dict[str, Any]:
    config = catalog.config_for(entry.name)
    connection = catalog.connection(entry.name)
    data: dict[str, Any] = {
        "name": entry.name,
        "origin": entry.origin.value,
        "transport": transport(catalog, entry),
        "target": catalog.display_target(entry.name),
        "status": entry.status.value,
        "error": entry.error,
        "detail": entry.detail,
        "warnings": list(entry.warnings),
        "tools": len(entry.tools),
        "prompts": len(entry.prompts),
        "resources": len(entry.resources),
        "resource_templates": len(entry.templates),
        "protocol_version": connection.protocol_version if connection else None,
    }
    if isinstance(config, HttpServerConfig):
        data["signed_in"] = catalog.oauth.signed_in(config)
    if full:
        data["tools"] = [{"name": t.name, "description": t.description} for t in entry.tools]
        data["prompts"] = [
            {
                "name": p.name,
                "command": f"/{p.command}",
                "description": p.description,
                "arguments": [
                    {"name": a.name, "required": a.required, "description": a.description}
                    for a in p.arguments
                ],
            }
            for p in entry.prompts
        ]
        data["resources"] = [
            {"uri": r.uri, "name": r.name, "mime_type": r.mime_type} for r in entry.resources
        ]
        data["resource_templates"] = [
            {"uri_template": t.uri_template, "name": t.name} for t in entry.templates
        ]
    return data


def _block(catalog: Catalog, entry: ServerEntry, *, full: bool) -> RenderableType:
    header = Text.assemble(
        (clean(entry.name), "bold"),
        "  ",
        (entry.status.value, STATUS_STYLE.get(entry.status, "")),
        "  ",
        (transport(catalog, entry), "dim"),
    )
    parts: list[RenderableType] = [header]
    parts.append(_indented(Text(one_line(catalog.display_target(entry.name), 300), "dim")))
    counts = " · ".join(
        [
            counted(len(entry.tools), "tool"),
            counted(len(entry.prompts), "prompt"),
            counted(len(entry.resources) + len(entry.templates), "resource"),
        ]
    )
    parts.append(_indented(Text(counts)))
    if entry.detail:
        parts.append(_indented(Text(one_line(entry.detail, 300), "yellow")))
    if entry.status is ServerStatus.NEEDS_AUTH:
        parts.append(_indented(Text(f"sign in: bassi mcp login {entry.name}", "magenta")))
    if entry.error and entry.status is not ServerStatus.NEEDS_AUTH:
        parts.append(_indented(Text(clean(entry.error, max_chars=3_000), "red")))
    for warning in entry.warnings:
        parts.append(_indented(Text(f"! {one_line(warning, 300)}", "yellow")))
    if full:
        for label, rows in (
            ("tools", [(t.name, t.description) for t in entry.tools]),
            ("prompts", [(f"/{p.command}", p.description) for p in entry.prompts]),
            (
                "resources",
                [(f"@{entry.name}:{r.uri}", r.name) for r in entry.resources]
                + [(f"@{entry.name}:{t.uri_template}", t.name) for t in entry.templates],
            ),
        ):
            if rows:
                parts.append(_indented(Text(label, "bold")))
                for name, about in rows:
                    line = Text(one_line(name, 120)) + Text(f"  {one_line(about)}", "dim")
                    parts.append(_indented(_indented(line)))
    return Group(*parts, Text(""))
