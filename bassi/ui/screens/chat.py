"""The chat screen: the log, the input line, the status bar; and every slash command.

The screen is the one place that acts on the runtime: widgets post messages up to it
(a search row was chosen, a line was submitted) and it calls down into the runtime and the
widgets. Agent turns run in an exclusive worker so the interface never waits on the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from bassi.core.catalog import CallProgress
from bassi.core.events import TextDelta, ToolCallFinished, ToolCallStarted
from bassi.core.history import EXCHANGES_SHOWN, HistoryUnavailable
from bassi.core.offers import OfferError, PromptInfo
from bassi.core.registry import ToolNotFoundError
from bassi.core.reveal import reveal
from bassi.core.runtime import ApprovalDecision, ApprovalRequest, Runtime
from bassi.core.safe_text import one_line
from bassi.core.tools import ToolInfo
from bassi.ui.bursts import CatchUp
from bassi.ui.commands import (
    COMMANDS,
    KEYS,
    CommandError,
    Invocation,
    is_command,
    is_private,
    parse,
    prompt_arguments,
    prompt_command,
)
from bassi.ui.completion import Offers
from bassi.ui.safe import plain, plain_line, plain_text
from bassi.ui.screens.approval import ApprovalScreen
from bassi.ui.screens.login import LoginScreen
from bassi.ui.screens.prompt_form import PromptFormScreen
from bassi.ui.screens.resume import ResumeScreen, session_title, when
from bassi.ui.screens.servers import OpenUrl, ServerManagerScreen, open_in_browser
from bassi.ui.screens.tool_card import ToolCardScreen
from bassi.ui.screens.trust import TrustScreen
from bassi.ui.transcript import SessionTotals, Transcript, error_notice, replayed
from bassi.ui.widgets.catalog import CatalogView
from bassi.ui.widgets.chat_log import ChatLog
from bassi.ui.widgets.messages import CommandEcho, Notice, UserMessage
from bassi.ui.widgets.prompt import CompletionHint, PromptInput
from bassi.ui.widgets.search_results import SearchResults
from bassi.ui.widgets.status_bar import StatusBar
from bassi.ui.widgets.tool_call import EXPAND_KEY, ToolCallBlock
from bassi.ui.widgets.tool_card import ToolCard
from bassi.ui.wording import counted

if TYPE_CHECKING:
    from claude_agent_sdk import SDKSessionInfo
    from mcp import types

    from bassi.core.connections import ElicitationRequest

SEARCH_LIMIT = 10
INTERRUPT_GRACE_S = 5.0
"""How long an interrupted turn may take to wind down before its worker is cancelled."""


class ChatScreen(Screen[None]):
    AUTO_FOCUS = "#prompt"
    """The input line has the focus from the start (focusing it later, after the log took
    it, would restyle the whole log before the first paint)."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt"),
        Binding("ctrl+c", "interrupt", "Interrupt", show=False, priority=True),
        Binding("pageup", "scroll_log(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_log(1)", "Scroll down", show=False),
        Binding(EXPAND_KEY, "expand_result", "Expand result"),
    ]

    streaming: reactive[bool] = reactive(False, bindings=True)

    class StateProblem(Message):
        """Saving the project's state failed (posted from the writer thread)."""

        def __init__(self, problem: str) -> None:
            super().__init__()
            self.problem = problem

    def __init__(self, runtime: Runtime, *, warnings: Sequence[str] = ()) -> None:
        super().__init__()
        self.runtime = runtime
        self.warnings = list(warnings)
        self.totals = SessionTotals()
        self._unsubscribe: Callable[[], None] | None = None
        self._unsubscribe_calls: Callable[[], None] | None = None
        self.open_url: OpenUrl = open_in_browser
        """How a URL is shown to the person (sign-in, a server's request): the browser."""
        self._turn_started = 0.0
        self._last_event = 0.0
        """When the turn last showed a sign of life (monotonic seconds)."""
        self._tools_running: dict[str, str] = {}
        """Tool calls of this turn still running: id -> server/tool."""

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield ChatLog(id="chat-log")
        yield PromptInput(
            self.runtime.state.history,
            tools=self.runtime.catalog.registry.tools,
            pinned=self.runtime.pinned,
            offers=self._offers,
            id="prompt",
        )
        yield CompletionHint(id="completion-hint")
        yield StatusBar(id="status").data_bind(ChatScreen.streaming)
        yield Footer()

    async def on_mount(self) -> None:
        registry = self.runtime.catalog.registry
        self._unsubscribe = registry.subscribe(CatchUp(self, self.show_status))
        self._unsubscribe_calls = self.runtime.catalog.calls.subscribe(self._call_progress)
        self.runtime.approval_handler = self.ask_approval
        self.runtime.elicitation_handler = self.ask_elicitation
        self.runtime.state.subscribe(self._state_problem)
        for warning in [*self.warnings, *self.runtime.warnings]:
            await self.log_widget.add(Notice(plain(warning), "warning"))
        await self.log_widget.add(self._catalog())
        self.show_status()
        # After the first paint: starting imports mcp and the search engine (in a thread,
        # but it still competes for the interpreter), and the catalog must be on screen first.
        self.call_after_refresh(self.start_runtime)
        servers, rules = self.runtime.pending()
        if servers or rules:
            self.review_project()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._unsubscribe_calls is not None:
            self._unsubscribe_calls()

    def _state_problem(self, problem: str) -> None:
        """Called on the writer thread; post_message is thread-safe."""
        self.post_message(self.StateProblem(problem))

    async def on_chat_screen_state_problem(self, message: StateProblem) -> None:
        await self.log_widget.add(Notice(plain(message.problem), "warning"))

    def _offers(self) -> Offers:
        registry = self.runtime.catalog.registry
        return Offers(registry.prompts(), registry.resources(), registry.templates())

    def _call_progress(self, update: CallProgress) -> None:
        for block in self.query(ToolCallBlock):
            if block.call_id == update.call_id:
                block.show_progress(update.progress, update.total, update.message)

    @property
    def log_widget(self) -> ChatLog:
        return self.query_one(ChatLog)

    def _catalog(self) -> CatalogView:
        catalog = self.runtime.catalog
        return CatalogView(
            catalog.registry, [str(p) for p in catalog.problems], self.runtime.policy
        )

    @work(group="trust", exclusive=True, exit_on_error=False)
    async def review_project(self) -> None:
        """Ask whether this project's own servers may start and its allow rules count."""
        servers, rules = self.runtime.pending()
        if not servers and not rules:
            await self.log_widget.add(Notice("Nothing in this project waits for your approval."))
            return
        if await self.app.push_screen_wait(TrustScreen(servers, rules)):
            approved = self.runtime.approve_project()
            text = f"Approved {', '.join(approved)}." if approved else "Nothing left to approve."
            if servers:
                text += " Its servers are starting."
            await self.log_widget.add(Notice(plain(text)))
        else:
            names = [s.name for s in servers] + [r.name for r in rules]
            await self.log_widget.add(
                Notice(
                    plain(
                        f"Not approved: {', '.join(names)}. Nothing of it runs or counts. "
                        "/approve asks again; `bassi mcp approve` approves from a shell."
                    ),
                    "warning",
                )
            )
        self.show_status()

    @work(group="runtime", exit_on_error=False)
    async def start_runtime(self) -> None:
        try:
            await self.runtime.start()
        except Exception as exc:
            await self.log_widget.add(error_notice(f"bassi could not start: {exc}", None))
            return
        self.show_status()
        if self.runtime.settings.continue_session:
            continued = await self.runtime.continued_session()
            if continued is None:
                await self.log_widget.add(
                    Notice(
                        "No earlier conversation in this directory to continue: this is a new one."
                    )
                )
            else:
                await self.show_resumed(continued)

    def show_status(self) -> None:
        bar = self.query_one(StatusBar)
        exposure = self.runtime.exposure()
        with self.app.batch_update():
            bar.model = self.runtime.settings.model
            bar.session_tokens = self.totals.tokens
            bar.cost_usd = self.totals.cost_usd
            bar.exposed, bar.pinned = exposure.exposed, exposure.pinned
            bar.mode = str(exposure.mode)
            bar.show_servers(self.runtime.catalog.registry.servers())

    # --- input -----------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """Typing while a table or block in the log has focus goes to the input line, but
        for the keys that widget binds itself (``x`` explains a search result)."""
        prompt = self.query_one(PromptInput)
        focused = self.focused
        bound = {b.key for b in getattr(focused, "BINDINGS", ()) if isinstance(b, Binding)}
        if (
            event.is_printable
            and event.character
            and focused is not prompt
            and (event.key not in bound)
        ):
            prompt.focus()
            prompt.insert_text_at_cursor(event.character)
            event.stop()

    @on(Input.Changed, "#prompt")
    def show_completions(self, event: Input.Changed) -> None:
        self.query_one(CompletionHint).show_for(self.query_one(PromptInput).completions())

    @on(Input.Submitted, "#prompt")
    async def submit(self, event: Input.Submitted) -> None:
        """The prompt has already cleared itself (see ``PromptInput.action_submit``)."""
        line = event.value
        prompt = self.query_one(PromptInput)
        if not line.strip():
            return
        if not is_command(line) and self.streaming:
            self.notify("A reply is still streaming: wait for it, or press Esc to interrupt.")
            if not prompt.value:
                prompt.value = line
            return
        if not is_private(line):
            self.runtime.state.add_history(line)
        prompt.rewind()
        # Whatever was sent, its answer is what the user wants to see next.
        self.log_widget.anchor()
        if is_command(line):
            await self.run_command(line)
        else:
            self.send(line)

    async def run_command(self, line: str) -> None:
        """The command is echoed first, so each output sits under what asked for it."""
        await self.log_widget.add(CommandEcho(line if not is_private(line) else line.split()[0]))
        if (prompt_line := prompt_command(line)) is not None:
            await self.run_prompt(*prompt_line)
            return
        try:
            invocation = parse(line)
        except CommandError as exc:
            await self.log_widget.add(Notice(str(exc), "error"))
            return
        await self.dispatch(invocation)

    async def dispatch(self, invocation: Invocation) -> None:
        handler = getattr(self, invocation.command.handler)
        await handler(invocation.argument)

    # --- agent turns -------------------------------------------------------------------------

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def send(self, text: str) -> None:
        await self.log_widget.add(UserMessage(text))
        transcript = Transcript(self.log_widget, self.totals)
        self._turn_started = self._last_event = time.monotonic()
        self._tools_running.clear()
        self.streaming = True
        self._show_activity()
        ticker = self.set_interval(1.0, self._show_activity)
        try:
            attached = await self.runtime.attach_resources(text)
            if attached.references:
                names = ", ".join(r.text for r in attached.references)
                await self.log_widget.add(Notice(plain(f"Attached {names}.")))
            for problem in attached.problems:
                await self.log_widget.add(Notice(plain(f"Not attached: {problem}"), "warning"))
            async for event in self.runtime.send(attached.text):
                self._last_event = time.monotonic()
                await transcript.show(event)
                if isinstance(event, ToolCallStarted):
                    self._tools_running[event.id] = (
                        f"{event.server}/{event.tool}" if event.server else event.tool
                    )
                elif isinstance(event, ToolCallFinished):
                    self._tools_running.pop(event.id, None)
                    self.refresh_bindings()  # a long result can now be expanded
                if not isinstance(event, TextDelta):
                    # Text changes no figure; the rest may (totals, tools the agent loaded),
                    # and the status walks every tool, so not once per token.
                    self.show_status()
                self._show_activity()
        except asyncio.CancelledError:
            await self.log_widget.add(
                Notice("Interrupted (the agent did not stop in time).", "warning")
            )
            raise
        except Exception as exc:
            await self.log_widget.add(error_notice(f"The turn failed: {exc}", None))
        finally:
            ticker.stop()
            await transcript.close_message()
            self.streaming = False
            self.show_status()

    def _show_activity(self) -> None:
        """How long the turn has run, and how long since the model (or a tool) last showed
        a sign of life: a stalled stream must not look like a slow one."""
        now = time.monotonic()
        bar = self.query_one(StatusBar)
        with self.app.batch_update():
            bar.elapsed = int(now - self._turn_started)
            bar.quiet = int(now - self._last_event)
            bar.running_tool = next(reversed(self._tools_running.values()), "")

    def action_scroll_log(self, direction: int) -> None:
        """Page through the log while the input keeps focus. Scrolling up stops following
        new output; reaching the end again resumes it."""
        log = self.log_widget
        if direction < 0:
            log.scroll_page_up(animate=False)
        else:
            log.scroll_page_down(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            # Only while a reply streams; otherwise Esc and Ctrl+C keep their usual meaning.
            return self.streaming
        if action == "expand_result":
            return self._foldable_result() is not None
        return True

    def _foldable_result(self) -> ToolCallBlock | None:
        """The focused tool result if it folds, else the newest one that does."""
        if isinstance(self.focused, ToolCallBlock) and self.focused.foldable:
            return self.focused
        foldable = [block for block in self.query(ToolCallBlock) if block.foldable]
        return foldable[-1] if foldable else None

    def action_expand_result(self) -> None:
        block = self._foldable_result()
        if block is not None:
            block.action_toggle_expanded()
            self.log_widget.scroll_to_widget(block, animate=False)

    def action_interrupt(self) -> None:
        self.interrupt()

    @work(group="interrupt", exclusive=True, exit_on_error=False)
    async def interrupt(self) -> None:
        """Ask the agent to stop (the turn then ends with "Interrupted."); a turn that has not
        ended after the grace period is cancelled, so the input is never stuck behind it."""
        turns = [w for w in self.workers if w.group == "turn" and w.is_running]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.runtime.interrupt(), INTERRUPT_GRACE_S)
        for worker in turns:
            try:
                await asyncio.wait_for(worker.wait(), INTERRUPT_GRACE_S)
            except Exception:
                worker.cancel()

    async def ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """The runtime's approval handler: asks in a modal, waits for the answer."""
        answer: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()

        def done(decision: ApprovalDecision | None) -> None:
            if not answer.done():
                answer.set_result(decision or ApprovalDecision.DENY)

        entry = self.runtime.catalog.registry.server(request.tool.server)
        await self.app.push_screen(
            ApprovalScreen(request, server_target=entry.target), callback=done
        )
        decision = await answer
        self.show_status()
        return decision

    async def ask_elicitation(self, request: ElicitationRequest) -> types.ElicitResult:
        """The runtime's elicitation handler: a server asks the person; a modal answers."""
        from mcp import types  # loaded by the connection that asks

        from bassi.ui.screens.elicitation import ElicitationScreen

        answer: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()

        def done(result: types.ElicitResult | None) -> None:
            if not answer.done():
                answer.set_result(result or types.ElicitResult(action="cancel"))

        await self.app.push_screen(ElicitationScreen(request, self.open_url), callback=done)
        return await answer

    # --- MCP prompts ---------------------------------------------------------------------------

    async def run_prompt(self, command: str, text: str) -> None:
        """``/mcp__<server>__<prompt> args``: render the server's prompt and send it. Missing
        required arguments (or any, when none were typed) are asked for in a form."""
        prompt = self.runtime.find_prompt(command)
        if prompt is None:
            known = [p.command for p in self.runtime.prompts()]
            close = difflib.get_close_matches(command, known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join('/' + c for c in close)}?" if close else ""
            await self.log_widget.add(
                Notice(plain(f"No MCP prompt /{command}.{hint} /help lists them."), "error")
            )
            return
        try:
            values, missing = prompt_arguments(prompt, text)
        except CommandError as exc:
            await self.log_widget.add(Notice(plain(str(exc)), "error"))
            return
        if missing or (prompt.arguments and not text):
            self.app.push_screen(
                PromptFormScreen(prompt, values),
                callback=lambda chosen: self._prompt_chosen(prompt, chosen),
            )
            return
        self.send_prompt(prompt, values)

    def _prompt_chosen(self, prompt: PromptInfo, values: dict[str, str] | None) -> None:
        if values is not None:
            self.send_prompt(prompt, values)

    @work(group="prompt", exclusive=True, exit_on_error=False)
    async def send_prompt(self, prompt: PromptInfo, values: dict[str, str]) -> None:
        if self.streaming:
            self.notify("A reply is still streaming: wait for it, or press Esc to interrupt.")
            return
        try:
            text = await self.runtime.render_prompt(prompt, values)
        except OfferError as exc:
            await self.log_widget.add(Notice(plain(f"/{prompt.command} failed: {exc}"), "error"))
            return
        await self.log_widget.add(Notice(plain(f"Prompt /{prompt.command} from {prompt.server}:")))
        self.send(text)

    # --- slash commands -------------------------------------------------------------------------

    async def command_help(self, _argument: str) -> None:
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for command in COMMANDS:
            table.add_row(command.usage, command.summary)
        prompts = self.runtime.prompts()
        if prompts:
            table.add_row("", "")
            table.add_row("MCP prompts", "")
        for prompt in prompts:
            usage = f"/{prompt.command}" + "".join(
                f" <{a.name}>" if a.required else f" [{a.name}]" for a in prompt.arguments
            )
            table.add_row(plain_text(usage, max_chars=100), plain_text(prompt.description[:100]))
        table.add_row("", "")
        for keys, what in KEYS:
            table.add_row(keys, what)
        table.add_row("", "")
        table.add_row("", "Anything else you type is sent to the agent.")
        await self.log_widget.add(Static(table, classes="notice help"))

    async def command_tools(self, _argument: str) -> None:
        await self.log_widget.add(self._catalog())

    async def command_tools_search(self, query: str) -> None:
        catalog = self.runtime.catalog
        found = catalog.index.find(query, limit=SEARCH_LIMIT)
        if found.problem is not None:
            message = Content("Cannot search: ") + plain(found.problem)
            await self.log_widget.add(Notice(message, "warning"))
            return
        waiting = catalog.waiting()
        later = (
            plain(f" ({', '.join(waiting)} still connecting: more tools may match soon)")
            if waiting
            else Content("")
        )
        relaxed = plain(f" ({found.relaxed})") if found.relaxed else Content("")
        if found.hits:
            heading = Content("").join(
                [Content("Tools matching "), plain(repr(query)), relaxed, later]
            )
            table = SearchResults(found.hits)
            await self.log_widget.add(Notice(heading), table)
            table.focus()
            return
        if waiting:
            message = Content("No tools match ") + plain(repr(query)) + Content(" yet.") + later
            await self.log_widget.add(Notice(message, "warning"))
            return
        await self.log_widget.add(Notice(self._no_results(query), "warning"))

    @on(SearchResults.ExplainRequested)
    async def explain_rank(self, event: SearchResults.ExplainRequested) -> None:
        """Why a search result ranks where it does: the signals behind its score."""
        hit = event.hit
        lines = hit.signals.lines() if hit.signals is not None else []
        head = f"#{event.rank} {hit.tool.ref}: score {hit.score:.2f}"
        head += " (weak match)" if hit.weak else ""
        await self.log_widget.add(Notice(plain("\n".join([head, *(f"  {x}" for x in lines)]))))

    def _no_results(self, query: str) -> Content:
        """Say so, and point to something broader: close tool names for a typo, else how to
        ask more generally."""
        message = Content("No tools match ") + plain(repr(query)) + Content(".")
        close = self.runtime.catalog.registry.closest(query, limit=3)
        if close:
            return message + plain(f" Closest names: {', '.join(close)}.")
        return message + Content(
            " Try a broader query: fewer words, or what the tool does"
            ' ("mail" rather than "unread mail from Bob"); /tools lists every tool.'
        )

    async def command_tools_pinned(self, _argument: str) -> None:
        pinned = self.runtime.pinned()
        if not pinned:
            await self.log_widget.add(Notice("No tools pinned. /tool <name> pins one."))
            return
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for tool in pinned:
            table.add_row(
                plain_text(reveal(tool.ref), max_chars=100), plain_text(one_line(tool.summary, 100))
            )
        heading = Notice(f"Pinned tools ({len(pinned)})")
        await self.log_widget.add(heading, Static(table, classes="pinned-list"))

    async def command_tool(self, name: str) -> None:
        tool = await self._resolve(name)
        if tool is None:
            return
        already = self._is_pinned(tool)
        was = self.runtime.policy.allowance(tool)
        self.runtime.pin(tool)
        card = ToolCard(
            tool,
            self.runtime.policy,
            available=self._available(tool),
            schemas=self.runtime.catalog.schemas,
        )
        await self.log_widget.add(card)
        if was.changed:
            await self.log_widget.add(
                Notice(plain(f"Pinned again as it is defined now ({was.reason}).")),
            )
        elif already:
            await self.log_widget.add(Notice("It was pinned already."))
        self.show_status()

    async def command_tool_unpin(self, name: str) -> None:
        tool = await self._resolve(name)
        if tool is None:
            return
        if not self._is_pinned(tool):
            await self.log_widget.add(Notice(plain(f"{tool.ref} is not pinned."), "warning"))
            return
        self.runtime.unpin(tool)
        await self.log_widget.add(Notice(plain(f"Unpinned {tool.ref}.")))
        self.show_status()

    async def _resolve(self, name: str) -> ToolInfo | None:
        try:
            return self.runtime.resolve(name)
        except ToolNotFoundError as exc:
            if exc.ambiguous:
                text = f"'{name}' matches several tools; say which one:"
            elif exc.candidates:
                text = f"No tool named '{name}'. Closest:"
            else:
                text = f"No tool named '{name}'. /tools search <words> finds tools by what they do."
            lines = [text, *(f"  /tool {c}" for c in exc.candidates)]
            await self.log_widget.add(Notice(plain("\n".join(lines)), "error"))
            return None

    def _available(self, tool: ToolInfo) -> bool:
        return self.runtime.catalog.registry.is_available(tool)

    def _is_pinned(self, tool: ToolInfo) -> bool:
        return self.runtime.is_pinned(tool)

    async def command_approve(self, _argument: str) -> None:
        self.review_project()

    async def command_mcp(self, _argument: str) -> None:
        await self.app.push_screen(ServerManagerScreen(self.runtime.catalog, self.open_url))

    async def command_cost(self, _argument: str) -> None:
        t = self.totals
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(no_wrap=True)
        table.add_column(justify="right", no_wrap=True)
        for label, value in (
            ("turns", f"{t.turns:,}"),
            ("input tokens", f"{t.input_tokens:,}"),
            ("output tokens", f"{t.output_tokens:,}"),
            ("cache read tokens", f"{t.cache_read_tokens:,}"),
            ("cache write tokens", f"{t.cache_creation_tokens:,}"),
            ("all tokens", f"{t.tokens:,}"),
            ("cost", f"${t.cost_usd:.4f}"),
            ("model time", f"{t.duration_ms / 1000:.1f} s"),
        ):
            table.add_row(label, value)
        heading = Text("This session:")
        await self.log_widget.add(Static(Group(heading, table), classes="notice"))

    async def command_resume(self, _argument: str) -> None:
        if self.streaming:
            await self.log_widget.add(Notice("Wait for the reply (or Esc) before resuming."))
            return
        self.pick_session()

    @work(group="resume", exclusive=True, exit_on_error=False)
    async def pick_session(self) -> None:
        sessions = await self.runtime.list_sessions()
        if not sessions:
            await self.log_widget.add(Notice("No earlier conversations in this directory."))
            return
        chosen = await self.app.push_screen_wait(ResumeScreen(sessions))
        if chosen is None:
            return
        await self.runtime.resume(chosen.session_id)
        await self.show_resumed(chosen)

    async def show_resumed(self, session: SDKSessionInfo) -> None:
        """Say which conversation goes on, and show its last exchanges as they looked."""
        started = f"Resumed conversation from {when(session.last_modified)}"
        try:
            history = await self.runtime.history(session.session_id)
        except HistoryUnavailable as exc:
            title = plain_line(session_title(session), 80)
            reason = plain(f". Its messages cannot be shown: {exc}.")
            await self.log_widget.add(Notice(Content(f"{started}: ") + title + reason, "warning"))
            return
        text = f"{started}, {counted(history.messages, 'earlier message')}."
        if hidden := history.hidden_messages:
            text += (
                f" Showing the last {EXCHANGES_SHOWN} exchanges;"
                f" {counted(hidden, 'earlier message')} {'is' if hidden == 1 else 'are'} not shown."
            )
        await self.log_widget.add(Notice(text), *replayed(history.items))

    async def command_clear(self, _argument: str) -> None:
        if self.streaming:
            await self.log_widget.add(Notice("Wait for the reply (or Esc) before clearing."))
            return
        await self.runtime.new_conversation()
        self.totals = SessionTotals()
        await self.log_widget.clear()
        await self.log_widget.add(
            Notice("New conversation. The earlier one is kept: /resume brings it back.")
        )
        self.show_status()

    async def command_login(self, _argument: str) -> None:
        if self.streaming:
            await self.log_widget.add(Notice("Wait for the reply (or Esc) before /login."))
            return
        self.ask_for_key()

    @work(group="login", exclusive=True, exit_on_error=False)
    async def ask_for_key(self) -> None:
        key = await self.app.push_screen_wait(LoginScreen())
        if not key:
            await self.log_widget.add(Notice("No key given; nothing changed."))
            return
        await self.runtime.use_api_key(key)
        await self.log_widget.add(
            Notice(
                "The key is used from your next message on, in this conversation, until you "
                "quit; it is not saved anywhere. Send your message again."
            )
        )

    async def command_quit(self, _argument: str) -> None:
        self.app.exit(0)

    # --- cards -------------------------------------------------------------------------------

    @on(SearchResults.ToolChosen)
    def open_chosen(self, event: SearchResults.ToolChosen) -> None:
        self.open_card(event.tool)

    def open_card(self, tool: ToolInfo) -> None:
        self.app.push_screen(
            ToolCardScreen(
                tool,
                self.runtime.policy,
                available=self._available(tool),
                toggle_pin=self.toggle_pin,
                schemas=self.runtime.catalog.schemas,
            )
        )

    def toggle_pin(self, tool: ToolInfo) -> bool:
        if self._is_pinned(tool):
            self.runtime.unpin(tool)
            pinned = False
        else:
            self.runtime.pin(tool)
            pinned = True
        self.show_status()
        return pinned
