"""The one object the UI holds: catalog, access policy, grants and the agent session, wired.

The CLI's ``allowed_tools`` stays empty. It is fixed when the CLI connects, while what runs
without asking changes all the time (pins, "always" answers, approved projects), so every
call goes through ``can_use_tool``, which asks the access policy (``bassi.core.policy``) and,
when the policy says so, the user. The proxies check every call again and run only calls the
gate let through (see ``bassi.core.bridge``), so no path runs a tool that is hidden, denied or
not approved.

What the model sees is re-listed whenever it changes: the Runtime compares what each server
would list now with what the CLI listed last and toggles the servers that differ. Inside a
meta-tool call that happens before the call returns, which is what makes a loaded tool
callable in the same turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bassi.core.catalog import Catalog, import_modules
from bassi.core.events import AgentEvent, ToolCallFinished
from bassi.core.exposure import Exposure
from bassi.core.history import EXCHANGES_SHOWN, History, load_history
from bassi.core.meta_tools import META_TOOL_NAMES, SERVER_NAME, TOOLS
from bassi.core.offers import OfferError, PromptInfo
from bassi.core.permissions import RulesSource
from bassi.core.policy import AccessPolicy, Decision, Verdict
from bassi.core.prompt import build_system_prompt
from bassi.core.registry import ToolNotFoundError
from bassi.core.settings import Settings, ToolsMode
from bassi.core.state import ProjectState
from bassi.core.tools import ToolInfo, qualified_name, split_qualified
from bassi.core.trust import PendingServer

if TYPE_CHECKING:
    from claude_agent_sdk import SDKSessionInfo
    from claude_agent_sdk.types import (
        McpServerConfig,
        PermissionResult,
        PermissionResultDeny,
        ToolPermissionContext,
    )
    from mcp.server import Server

    from bassi.core.bridge import Admissions, CallTracker
    from bassi.core.connections import ElicitationHandler
    from bassi.core.meta_tools import MetaTools
    from bassi.core.offer_text import ResourceReference
    from bassi.core.search import SearchHit
    from bassi.core.session import AgentSession

logger = logging.getLogger(__name__)

AGENT_MODULES = ("bassi.core.session", "bassi.core.bridge")
"""What a chat turn needs (the agent SDK, mcp), imported in the background once the servers
are connecting: bassi's first screen must not wait for them, nor its first message."""
PRELOAD_AFTER = 3.0
"""Seconds the agent's import waits for the servers to connect first."""

READY_GRACE = 5.0
"""Seconds the first message waits for servers still connecting: long enough for a normal
stdio start, so the first request already knows them; a slow one joins the session later."""

ShippedServers = Mapping[str, Callable[[Path], "Server[Any]"]]


class ApprovalDecision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALWAYS_TOOL = "always_tool"
    """Pins the tool."""
    ALWAYS_SERVER = "always_server"
    """Allows every tool of the server, for good."""
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: ToolInfo
    arguments: dict[str, Any]
    decision: Decision
    """Why the policy asks (its reason, and what changed since a grant that lapsed)."""
    called: str
    """The name the model called the tool by."""


ApprovalHandler = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@dataclass(frozen=True, slots=True)
class Attached:
    """A message with the resources it named (``@server:uri``) read and attached."""

    text: str
    """What the agent gets: the message, then one block per resource."""
    references: list[ResourceReference] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """References that could not be read, and why (the message goes without them)."""


class Runtime:
    def __init__(self, settings: Settings, *, shipped: ShippedServers | None = None) -> None:
        self.settings = settings
        self.catalog = Catalog(settings, shipped=shipped)
        self.catalog.register()  # shown at once; ``start`` connects them
        self.state = ProjectState.load(settings.state_dir)
        self.approval_handler: ApprovalHandler | None = None
        registry = self.catalog.registry
        self.policy = AccessPolicy.load(
            registry, settings, self.catalog.trust, own_tools=META_TOOL_NAMES
        )
        self.grants = self.policy.grants
        self.rules = self.policy.rules
        self._exposure = self.policy.exposure
        self._ignored = self._ignored_grants()
        self._meta_tools: MetaTools | None = None
        self._admitted: Admissions | None = None
        self._calls: CallTracker | None = None
        """The three are made when first needed: they need ``mcp``, which the first screen
        must not wait for."""
        self._api_key: str | None = None
        """A key the user gave with /login: used for this run only, never written."""
        self._in_turn = False
        self._starting: asyncio.Future[None] | None = None
        self._session: AgentSession | None = None
        self._resume_id: str | None = None
        self._continued: SDKSessionInfo | None = None
        self._continue_looked_up = False
        self._continue_lock = asyncio.Lock()
        self._listed: dict[str, object] = {}
        """What the CLI listed last, per server it was given: exactly the session's servers."""
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        self._unsubscribe = registry.subscribe(lambda _server: self._sync_soon())

    @property
    def elicitation_handler(self) -> ElicitationHandler | None:
        """Asks the person when a server wants input (the app's modal)."""
        return self.catalog.elicitation_handler

    @elicitation_handler.setter
    def elicitation_handler(self, handler: ElicitationHandler | None) -> None:
        self.catalog.elicitation_handler = handler

    @property
    def warnings(self) -> list[str]:
        """Problems with the user's files (rules, state, grants) to show once."""
        return [
            *self.state.warnings,
            *self.grants.warnings,
            *self.catalog.trust.warnings,
            *self.rules.warnings,
            *self._ignored,
        ]

    def _ignored_grants(self) -> list[str]:
        """Once per content: grants in the project's ``.bassi/state.json`` do nothing now."""
        ignored = self.state.ignored_grants
        if not ignored or self.grants.noticed("ignored-project-grants", "\n".join(ignored)):
            return []
        return [
            f"{self.settings.state_dir / 'state.json'} grants {', '.join(ignored)}; a file in "
            "the project can no longer grant anything, so these are not honoured. Pin the "
            "tools you want with /tool <name>: pins now live in your own bassi directory."
        ]

    # Project trust

    def pending(self) -> tuple[list[PendingServer], list[RulesSource]]:
        """What in this project waits for the user's approval: servers from its servers
        file, and settings files with allow rules."""
        return self.catalog.pending(), self.policy.pending_rules()

    def approve_project(self) -> list[str]:
        """Approve every pending server (they start at once) and every pending rules file.
        Returns what was approved, for display."""
        approved = self.catalog.approve()
        for source in self.policy.pending_rules():
            self.catalog.trust.approve_rules(source.name, source.allow_patterns)
            approved.append(source.name)
        self._sync_soon()
        return approved

    async def start(self) -> None:
        """Start discovering servers; returns at once, servers fill in as they connect.
        ``send`` starts it too if the UI has not yet."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        # Everyone who asks waits for the same start (a message sent meanwhile must see the
        # servers connecting, not an empty catalog).
        await asyncio.shield(self._starting)

    async def _start(self) -> None:
        await self.catalog.start()
        self._background_task(self._preload_agent())
        self._background_task(self._prepare_search())

    async def _prepare_search(self) -> None:
        """Once every server has connected or failed, load the model for fused searches
        (``ToolIndex.prepare_queries``); a search or a message before then asks for it."""
        await self.catalog.wait_ready()
        self.catalog.index.prepare_queries()

    async def _preload_agent(self) -> None:
        """Once the servers had their moment (their connections run on this loop and would
        compete with the import), load what a chat turn needs, in a thread."""
        await self.catalog.wait_ready(PRELOAD_AFTER)
        await asyncio.to_thread(import_modules, AGENT_MODULES)

    def _background_task(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def _meta(self) -> MetaTools:
        if self._meta_tools is None:
            from bassi.core.meta_tools import MetaTools

            self._meta_tools = MetaTools(
                self.policy, self.catalog.index, changed=self._sync_exposure
            )
        return self._meta_tools

    @property
    def _admissions(self) -> Admissions:
        if self._admitted is None:
            from bassi.core.bridge import Admissions

            self._admitted = Admissions()
        return self._admitted

    @property
    def _tracker(self) -> CallTracker:
        if self._calls is None:
            from bassi.core.bridge import CallTracker

            self._calls = CallTracker()
        return self._calls

    # Tools

    def search(self, query: str, limit: int = 10, server: str | None = None) -> list[SearchHit]:
        return self.catalog.index.search(query, limit=limit, server=server)

    def resolve(self, name: str) -> ToolInfo:
        return self.policy.resolve(name)

    def pin(self, tool: ToolInfo | str) -> None:
        """Pin a tool as it is defined now: visible from the next request on and run without
        asking while its definition stays the same. Persisted in the user's directory."""
        info = self.resolve(tool) if isinstance(tool, str) else tool
        self.grants.pin(info)
        self._sync_soon()

    def unpin(self, tool: ToolInfo | str) -> None:
        qualified = tool.qualified_name if isinstance(tool, ToolInfo) else self._qualify(tool)
        self.grants.unpin(qualified)
        self._sync_soon()

    def is_pinned(self, tool: ToolInfo) -> bool:
        return self.grants.pin_of(tool.qualified_name) is not None

    def pinned(self) -> list[ToolInfo]:
        """Pinned tools, in pin order; a pin whose server has not announced it (yet) is
        still listed, by name."""
        out = []
        for qualified in self.grants.pins:
            parts = split_qualified(qualified)
            if parts is None:
                continue
            out.append(self.catalog.registry.get(*parts) or ToolInfo(*parts))
        return out

    def exposure(self) -> Exposure:
        summary = self.policy.summary()
        meta = len(TOOLS) if summary.mode is ToolsMode.PROGRESSIVE else 0
        return Exposure(summary.exposed + meta, summary.pinned, summary.mode)

    # Prompts and resources

    def prompts(self) -> list[PromptInfo]:
        """The prompts of every connected server, usable as ``/mcp__<server>__<prompt>``."""
        return self.catalog.registry.prompts()

    def find_prompt(self, command: str) -> PromptInfo | None:
        """The prompt a slash command (without the slash) names, if any."""
        return next((p for p in self.prompts() if p.command == command), None)

    async def render_prompt(self, prompt: PromptInfo, arguments: Mapping[str, str]) -> str:
        """The prompt's messages as the text of the message to send. Raises OfferError."""
        from bassi.core.offer_text import prompt_text

        result = await self.catalog.get_prompt(prompt.server, prompt.name, arguments)
        text = prompt_text(result)
        if not text.strip():
            raise OfferError(f"the prompt {prompt.command} rendered no text")
        return text

    async def attach_resources(self, message: str) -> Attached:
        """Read every resource the message names as ``@server:uri`` and attach it."""
        from bassi.core.offer_text import attachment, resource_references

        registry = self.catalog.registry
        references = resource_references(message, registry.resources(), registry.templates())
        blocks, problems = [], []
        for reference in references:
            try:
                result = await self.catalog.read_resource(reference.server, reference.uri)
            except OfferError as exc:
                problems.append(f"{reference.text}: {exc}")
                continue
            blocks.append(attachment(reference, result))
        attached = [r for r in references if not any(p.startswith(r.text) for p in problems)]
        return Attached("\n\n".join([message, *blocks]), attached, problems)

    # Conversation

    async def send(self, text: str) -> AsyncIterator[AgentEvent]:
        session = await self._ensure_session()
        self.catalog.index.prepare_queries()  # the agent may search its tools this turn
        await self._sync_exposure()
        self._in_turn = True
        try:
            async for event in session.send(text):
                if isinstance(event, ToolCallFinished):
                    event = self._with_full_result(event)
                yield event
        finally:
            self._in_turn = False
            if self._admitted is not None:
                self._admitted.clear()

    def _with_full_result(self, event: ToolCallFinished) -> ToolCallFinished:
        """The CLI flattens a tool's result for the model; the server's own result (kept
        by the catalog, for external servers) is read for people instead: its structured
        content as data, and what its other blocks are."""
        result = self.catalog.calls.result(event.id)
        if result is None:
            return event
        from bassi.core.offer_text import call_result_blocks

        return replace(event, content=call_result_blocks(result))

    async def interrupt(self) -> None:
        """Stop the turn. External calls in flight are cancelled at once (their servers get
        ``notifications/cancelled``), whether or not the CLI forwards the interrupt."""
        self.catalog.cancel_calls()
        if self._session is not None:
            await self._session.interrupt()

    async def list_sessions(self, limit: int = 20) -> list[SDKSessionInfo]:
        """Recent conversations in this project, newest first."""
        return await asyncio.to_thread(_recent_sessions, self.settings, limit)

    async def history(self, session_id: str, exchanges: int = EXCHANGES_SHOWN) -> History:
        """The last ``exchanges`` exchanges of an earlier conversation, to show on resuming.
        Raises HistoryUnavailable when its transcript cannot be read."""
        return await asyncio.to_thread(load_history, self.settings, session_id, exchanges)

    async def continued_session(self) -> SDKSessionInfo | None:
        """With ``--continue``: the conversation being continued (the latest in this
        directory), or None. Found once; the agent session then resumes exactly that one, so
        what the UI replays is what the agent remembers."""
        if not self.settings.continue_session:
            return None
        async with self._continue_lock:
            if not self._continue_looked_up:
                self._continue_looked_up = True
                try:
                    latest = await self.list_sessions(limit=1)
                except Exception:
                    logger.exception("could not list conversations to continue")
                    latest = []
                self._continued = latest[0] if latest else None
                if self._continued and self._session is None and self._resume_id is None:
                    self._resume_id = self._continued.session_id
        return self._continued

    async def new_conversation(self) -> None:
        """Start over: the next message opens a new conversation, and this one stays in the
        list to resume. Tools the agent loaded are forgotten; pins stay."""
        await self._close_session()
        self._resume_id = None
        self._continue_looked_up = True  # --continue applies to the first conversation only
        self._continued = None

    async def use_api_key(self, key: str) -> None:
        """Chat with ``key`` from the next message on, in this run only (nothing is written).
        The conversation goes on: the agent restarts, resuming it."""
        current = self._session.session_id if self._session is not None else None
        await self._close_session()
        self._resume_id = current or self._resume_id
        self._api_key = key.strip()

    async def resume(self, session_id: str) -> None:
        """Continue an earlier conversation from the next message on. Tools the agent loaded
        in the current one are forgotten; pins stay."""
        await self._close_session()
        self._resume_id = session_id

    async def close(self) -> None:
        self._unsubscribe()
        pending = [*self._background, *([self._starting] if self._starting else [])]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self._close_session()
        await self.catalog.close()
        await asyncio.to_thread(self.state.flush)

    # The gate

    async def can_use_tool(
        self, name: str, arguments: dict[str, Any], _context: ToolPermissionContext
    ) -> PermissionResult:
        """The CLI asks here before every tool call (``allowed_tools`` is empty): the policy
        decides, and asks the user when it says so. A call let through is admitted for the
        proxy, which runs nothing else."""
        from claude_agent_sdk.types import PermissionResultAllow, PermissionResultDeny

        decision = self.policy.decide(name)
        if decision.refused:
            return PermissionResultDeny(message=decision.message)
        if decision.verdict is not Verdict.ALLOW:
            if decision.tool is None:
                return PermissionResultDeny(message=f"No tool {name} exists; nothing was run.")
            refused = await self._ask(name, decision, decision.tool, arguments)
            if refused is not None:
                return refused
        self._admissions.admit(name)
        return PermissionResultAllow()

    async def _ask(
        self, called: str, decision: Decision, tool: ToolInfo, arguments: dict[str, Any]
    ) -> PermissionResultDeny | None:
        """The user's answer: None to run, else the refusal the model reads."""
        from claude_agent_sdk.types import PermissionResultDeny

        handler = self.approval_handler
        if handler is None:
            return PermissionResultDeny(
                message=f"{called} needs the user's approval and nobody can give it now, so "
                f"it was not run. The user can pin it with /tool {tool.ref}."
            )
        choice = await handler(ApprovalRequest(tool, dict(arguments), decision, called))
        if choice is ApprovalDecision.DENY:
            return PermissionResultDeny(
                message=f"The user declined {called}; it was not run. Do not retry it unless "
                "the user asks."
            )
        if choice is ApprovalDecision.ALWAYS_TOOL:
            self.pin(tool)
        elif choice is ApprovalDecision.ALWAYS_SERVER:
            self.grants.allow_server(tool.server, self.catalog.registry.server(tool.server).tools)
        return None

    def _qualify(self, name: str) -> str:
        if split_qualified(name):
            return name
        try:
            return self.resolve(name).qualified_name
        except ToolNotFoundError:
            server, _, tool = name.partition("/")
            if server and tool:
                return qualified_name(server, tool)
            raise

    # The session and what its CLI lists

    async def _ensure_session(self) -> AgentSession:
        if self._session is not None:
            return self._session
        await self.start()
        await self.continued_session()
        if not await self.catalog.wait_ready(READY_GRACE):
            logger.info("starting the session while some servers are still connecting")
        from bassi.core.session import AgentSession

        self._exposure.reset_loaded()
        servers = self._mcp_servers()
        self._listed = self._listing()
        settings = self.settings
        if self._continue_looked_up and settings.continue_session:
            # What --continue meant is settled (in _resume_id): a later session starts fresh.
            settings = replace(settings, continue_session=False)
        if self._api_key:
            settings = replace(settings, env={**settings.env, "ANTHROPIC_API_KEY": self._api_key})
        self._session = AgentSession(
            settings,
            mcp_servers=servers,
            can_use_tool=self.can_use_tool,
            system_prompt=build_system_prompt(self.catalog.registry, self._exposure.mode),
            resume=self._resume_id,
        )
        self._resume_id = None
        return self._session

    def _mcp_servers(self) -> dict[str, McpServerConfig]:
        from claude_agent_sdk.types import McpSdkServerConfig

        from bassi.core.bridge import proxy_config

        meta = self._meta.server(
            lambda: self._exposure.mode is ToolsMode.PROGRESSIVE, self._tracker
        )
        servers: dict[str, McpServerConfig] = {
            SERVER_NAME: McpSdkServerConfig(type="sdk", name=SERVER_NAME, instance=meta)
        }
        for entry in self.catalog.registry.servers():
            servers[entry.name] = proxy_config(
                entry.name, self.policy, self.catalog, self._admissions, self._tracker
            )
        return servers

    def _listing(self) -> dict[str, object]:
        """What each server would list now; compared with what the CLI listed last."""
        listing: dict[str, object] = dict(self._exposure.snapshot())
        listing[SERVER_NAME] = self._exposure.mode is ToolsMode.PROGRESSIVE
        return listing

    async def _sync_exposure(self) -> None:
        """Make the CLI list again every server whose exposed tools changed. A server with a
        call in flight is skipped (re-listing would cut the call short); the next sync, at the
        latest before the next message, catches it up.

        The CLI adds what a server lists anew, but keeps sending the definitions of tools it
        already sent while their server stays enabled. So a server with nothing exposed any
        more is switched off, which takes its definitions out of the requests; a tool taken
        from a server that keeps others (one of two pins undone) still shows until the next
        session, and the proxy refuses a call to it, so it never runs."""
        async with self._lock:
            session = self._session
            if session is None:
                return
            for server, now in self._listing().items():
                if server not in self._listed or self._listed[server] == now:
                    continue
                if self._tracker.busy(server):
                    continue
                try:
                    await session.refresh_server(server, enabled=bool(now))
                except Exception:
                    logger.exception("could not re-list server %s; will retry", server)
                    continue
                self._listed[server] = now

    def _sync_soon(self) -> None:
        """Re-list after a change from outside the agent (a server connected or died, the
        user pinned a tool). Not during a turn: a server's call may have returned to bassi
        but not yet reached the CLI, and re-listing the server then would lose the result.
        ``send`` syncs before every message, so such a change waits at most until then;
        within a turn only the meta-tools re-list, which is what same-turn loading needs."""
        if self._session is None or self._in_turn:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._background_task(self._sync_exposure())

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        self._listed = {}
        if session is not None:
            await session.close()


def _recent_sessions(settings: Settings, limit: int) -> list[SDKSessionInfo]:
    """In the worker thread: the agent SDK this imports is not yet loaded early on."""
    from bassi.core.session import recent_sessions

    return recent_sessions(settings, limit)
