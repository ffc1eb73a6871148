"""``bassi mcp approve``: approve a project's own servers and permission rules from a shell.

Nothing here starts a server: approving only records, in the user's own bassi directory,
that the named servers (as they are configured now) may start and that the project's allow
rules count. The next ``bassi`` or ``bassi tools`` run starts them.

Exit codes: 0 on success (also when nothing waits); 2 for a name that is neither a server of
the servers file nor a settings file of the project.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from bassi.core.safe_text import clean
from bassi.core.settings import Settings
from bassi.core.trust import Standing

if TYPE_CHECKING:
    from bassi.core.permissions import RulesSource
    from bassi.core.trust import PendingServer


def add_mcp_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="manage this project's MCP servers",
        description="Manage the MCP servers of the project in the current directory.",
    )
    actions = mcp.add_subparsers(dest="mcp_command", required=True)
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
    return _approve(settings, list(args.names), args.all, out, err)


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
        out.print(Text(f"  runs {clean(pending.target)}"))
    for source in rules.values():
        out.print(Text.assemble((clean(source.name), "bold"), " lets these run without asking:"))
        for pattern in source.allow_patterns:
            out.print(Text(f"  {clean(pattern)}"))
    out.print(Text("Approve with: bassi mcp approve NAME ... or bassi mcp approve --all"))
    return 0
