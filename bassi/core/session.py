"""One conversation with the agent: a single Claude Code CLI behind ``ClaudeSDKClient``,
turned into the typed events of :mod:`bassi.core.events`.

Why the options are what they are:

- ``tools=[]``: no CLI built-ins; every tool bassi offers is an MCP server it controls.
- ``setting_sources=[]`` and ``strict_mcp_config``: the user's own Claude Code settings must not
  add MCP servers, hooks or permission allow-rules (an allow-rule would let a tool call skip
  bassi's own approval in ``can_use_tool``).
- ``include_partial_messages``: replies stream as text deltas; the final assistant message is
  then only used for text that did NOT stream (the CLI's non-streamed fallback after a broken
  stream), so nothing is shown twice.
- the default permission mode, never one that skips checks: the CLI refuses that as root, and
  bassi decides every tool call itself.
- the CLI's stderr goes to a buffer and the log, not the terminal (it would corrupt the TUI);
  its tail is quoted when the CLI fails.
- a rejected key ends the turn at the CLI's first retry: the CLI retries every failed call,
  401 included, about ten times over three minutes, and no retry fixes a wrong key. Other
  failures keep the CLI's retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    CanUseTool,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    McpServerConfig,
    Message,
    ResultMessage,
    SDKSessionInfo,
    SessionMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    get_session_messages,
    list_sessions,
)

from bassi import __version__
from bassi.core.credentials import (
    claude_config_dir,
    credential_source,
    missing_credentials_error,
    rejected_credentials_error,
)
from bassi.core.events import (
    AgentError,
    AgentEvent,
    ErrorKind,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from bassi.core.refusals import refusal_reason
from bassi.core.settings import Settings
from bassi.core.tool_results import result_blocks, result_text
from bassi.core.tools import split_tool_name

logger = logging.getLogger(__name__)
cli_logger = logging.getLogger("bassi.cli")
"""The CLI's stderr, line by line, for the log file."""

STDERR_LINES_KEPT = 40
MAX_CLI_MESSAGE_BYTES = 16 * 1024 * 1024
"""The SDK's default (1 MB) is one large tool result away from killing the session."""
INTERRUPT_DRAIN_SECONDS = 10.0
AUTH_STATUSES = (401, 403)
"""HTTP statuses that mean the credentials were refused: retrying cannot help."""
"""How long to wait for an abandoned turn's end before giving up on the CLI and restarting."""


class AgentSession:
    """One conversation; the CLI starts on first use and keeps the history until closed.

    Turns run one at a time: a ``send`` while another turn is still being iterated waits.
    If a consumer stops iterating a turn early, the next ``send`` interrupts that turn first.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
        can_use_tool: CanUseTool | None = None,
        system_prompt: str = "",
        resume: str | None = None,
    ) -> None:
        self.settings = settings
        self.session_id: str | None = resume
        self._mcp_servers = dict(mcp_servers or {})
        self._can_use_tool = can_use_tool
        self._system_prompt = _join_prompt(system_prompt, settings.system_prompt_extra)
        self._continue = settings.continue_session and resume is None
        self._client: ClaudeSDKClient | None = None
        self._connect_lock = asyncio.Lock()
        self._turn_lock = asyncio.Lock()
        self._turn_open = False
        """A query was sent and its ResultMessage not yet read."""
        self._interrupted = False
        self._closed = False
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._cli_cost_seen = 0.0
        """The CLI reports its process's cumulative cost; a turn's cost is the difference."""
        self.total_cost_usd = 0.0
        """What this conversation has cost so far, over CLI restarts."""

    # ---------------------------------------------------------------------------- lifecycle

    async def connect(self) -> None:
        """Start the CLI now rather than on the first message (e.g. to pay its start-up early).

        Raises ``ClaudeSDKError`` if it cannot start; ``send`` reports that as an event instead.
        """
        async with self._connect_lock:
            if self._closed:
                raise ClaudeSDKError("the session is closed")
            if self._client is not None:
                return
            client = ClaudeSDKClient(self._options())
            await client.connect()
            self._client = client
            self._cli_cost_seen = 0.0
            # Resuming goes on from where the conversation was, once only: after a restart
            # (the CLI died) we resume our own session id instead.
            self._continue = False

    async def close(self) -> None:
        """Stop the CLI (a running turn is interrupted first); the session cannot be reused."""
        self._closed = True
        async with self._connect_lock:
            await self._disconnect()

    async def interrupt(self) -> None:
        """End the current turn promptly; its ``send`` finishes with ``interrupted=True``."""
        client = self._client
        if client is None or not self._turn_open:
            return
        self._interrupted = True
        try:
            await client.interrupt()
        except (ClaudeSDKError, OSError) as exc:
            logger.warning("interrupt failed: %s", exc)

    async def refresh_server(self, name: str, *, enabled: bool = True) -> None:
        """Make the CLI list the tools of MCP server ``name`` again (toggled off and on).

        The new list is in the very next model request, even inside the current turn. The CLI
        adds what a server lists anew but keeps sending definitions it already sent while the
        server stays enabled; ``enabled=False`` leaves the server off, which is the one way to
        take its definitions out of the requests. Before the CLI started there is nothing to
        refresh: it lists every server when it starts.
        """
        client = self._client
        if client is None:
            return
        await client.toggle_mcp_server(name, False)
        if enabled:
            await client.toggle_mcp_server(name, True)

    # ---------------------------------------------------------------------------- a turn

    async def send(self, text: str) -> AsyncIterator[AgentEvent]:
        """Send a user message; yield the turn's events, the last one a ``TurnFinished`` or an
        ``AgentError``. Errors never raise: the session stays usable for the next message."""
        async with self._turn_lock:
            if self._closed:
                yield AgentError("internal", "This conversation was closed.", "Start a new one.")
                return
            source = credential_source(self.settings.env)
            if source is None:
                yield missing_credentials_error()
                return
            try:
                client = await self._ready_client()
                self._interrupted = False
                self._turn_open = True
                await client.query(text)
            except Exception as exc:  # the SDK raises bare Exception too; never let it out
                self._turn_open = False
                yield self._cli_failure(exc)
                await self._drop_client()
                return
            async for event in self._turn_events(client, source):
                yield event

    async def _turn_events(
        self, client: ClaudeSDKClient, credentials: str
    ) -> AsyncIterator[AgentEvent]:
        """``credentials`` names what the CLI authenticates with, for an auth error."""
        turn = _Turn()
        rejected: int | None = None
        """The HTTP status with which the API refused the credentials, once it did."""
        try:
            async for message in client.receive_messages():
                for event in turn.events(message, self._interrupted):
                    if isinstance(event, Retrying) and event.error_status in AUTH_STATUSES:
                        if rejected is None:
                            rejected = event.error_status
                            await self.interrupt()
                        continue
                    yield event
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    self.session_id = str(message.data.get("session_id") or self.session_id)
                if isinstance(message, ResultMessage):
                    self._turn_open = False
                    self.session_id = message.session_id
                    cli_cost = float(message.total_cost_usd or 0.0)
                    turn_cost = max(0.0, cli_cost - self._cli_cost_seen)
                    self._cli_cost_seen = cli_cost
                    self.total_cost_usd += turn_cost
                    if rejected is not None:
                        yield rejected_credentials_error(credentials, rejected)
                    else:
                        yield turn.finish(message, self._interrupted, credentials, turn_cost)
                    return
        except Exception as exc:  # the SDK raises bare Exception too; never let it out
            if self._closed:
                return
            yield self._cli_failure(exc)
            await self._drop_client()
            return
        if not self._closed:
            yield self._cli_failure(None)
            await self._drop_client()

    # ---------------------------------------------------------------------------- internals

    def _options(self) -> ClaudeAgentOptions:
        env = dict(self.settings.env)
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        return ClaudeAgentOptions(
            tools=[],
            mcp_servers=dict(self._mcp_servers),
            strict_mcp_config=True,
            setting_sources=[],
            can_use_tool=self._can_use_tool,
            system_prompt=self._system_prompt,
            model=self.settings.model,
            cwd=self.settings.project_dir,
            env=env,
            include_partial_messages=True,
            resume=self.session_id if self.session_id else None,
            continue_conversation=self._continue,
            stderr=self._stderr_line,
            max_buffer_size=MAX_CLI_MESSAGE_BYTES,
            client_app=f"bassi/{__version__}",
        )

    def _stderr_line(self, line: str) -> None:
        self._stderr.append(line)
        cli_logger.info("%s", line.rstrip())

    async def _ready_client(self) -> ClaudeSDKClient:
        """The connected client, with any abandoned turn ended first."""
        await self.connect()
        if self._turn_open and self._client is not None:
            await self._end_abandoned_turn(self._client)
            await self.connect()
        client = self._client
        if client is None:
            raise ClaudeSDKError("the CLI is not running")
        return client

    async def _end_abandoned_turn(self, client: ClaudeSDKClient) -> None:
        """A consumer stopped iterating mid-turn: interrupt it and read up to its result, so
        its messages don't leak into the next turn. A CLI that does not answer is restarted."""
        with contextlib.suppress(ClaudeSDKError, OSError):
            await client.interrupt()
        try:
            async with asyncio.timeout(INTERRUPT_DRAIN_SECONDS):
                async for message in client.receive_messages():
                    if isinstance(message, ResultMessage):
                        self.session_id = message.session_id
                        break
        except (TimeoutError, ClaudeSDKError, OSError):
            logger.warning("abandoned turn did not end; restarting the CLI")
            await self._drop_client()
        self._turn_open = False

    async def _drop_client(self) -> None:
        """Forget a failed CLI; the next message starts a new one resuming this conversation."""
        async with self._connect_lock:
            await self._disconnect()

    async def _disconnect(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self._turn_open:
            with contextlib.suppress(ClaudeSDKError, OSError):
                async with asyncio.timeout(2):
                    await client.interrupt()
        self._turn_open = False
        try:
            await client.disconnect()
        except (ClaudeSDKError, OSError) as exc:
            logger.warning("CLI did not shut down cleanly: %s", exc)

    def _cli_failure(self, exc: Exception | None) -> AgentError:
        """An event for a failure outside the API: the CLI could not start, died, or the SDK
        broke. Never raised: the session restarts the CLI on the next message."""
        detail = str(exc).strip() if exc else "it stopped in the middle of a reply"
        tail = "\n".join(list(self._stderr)[-5:]).strip()
        message = f"The Claude Code CLI failed: {detail}"
        if tail and tail not in message:
            message += f"\n{tail}"
        hint = "Send your message again: bassi restarts the CLI and keeps the conversation."
        if exc is None or isinstance(exc, ClaudeSDKError | OSError):
            return AgentError("connection", message, hint)
        logger.error("agent session failed", exc_info=exc)
        return AgentError("internal", message, hint)


class _Turn:
    """Translates one turn's SDK messages into events (state: what streamed, what failed)."""

    def __init__(self) -> None:
        self.streamed_messages: set[str] = set()
        self.current_message: str | None = None
        self.error: AssistantMessage | None = None
        self.streamed_usage: dict[str, dict[str, int]] = {}
        """Usage per model message as it streamed: the result of an interrupted turn reports
        none, though the tokens were spent (and cost)."""

    def events(self, message: Message, interrupted: bool) -> Iterator[AgentEvent]:
        """``interrupted``: the user asked to stop, so a failed tool call was stopped."""
        if isinstance(message, StreamEvent):
            if message.parent_tool_use_id is None:
                yield from self._stream_event(message.event)
        elif isinstance(message, AssistantMessage):
            if message.parent_tool_use_id is None:
                yield from self._assistant(message)
        elif isinstance(message, UserMessage):
            yield from self._tool_results(message, interrupted)
        elif isinstance(message, SystemMessage) and message.subtype == "api_retry":
            data = message.data
            yield Retrying(
                attempt=int(data.get("attempt") or 0),
                max_retries=int(data.get("max_retries") or 0),
                delay_ms=int(data.get("retry_delay_ms") or 0),
                error_status=data.get("error_status"),
                error=str(data.get("error") or ""),
            )

    def _stream_event(self, event: Mapping[str, Any]) -> Iterator[AgentEvent]:
        kind = event.get("type")
        if kind == "message_start":
            started = event.get("message", {})
            self.current_message = str(started.get("id", ""))
            self._add_usage(started.get("usage"))
        elif kind == "message_delta":
            self._add_usage(event.get("usage"))
        elif kind == "content_block_delta":
            delta = event.get("delta", {})
            if delta.get("type") == "text_delta" and delta.get("text"):
                if self.current_message is not None:
                    self.streamed_messages.add(self.current_message)
                yield TextDelta(str(delta["text"]))

    def _add_usage(self, usage: object) -> None:
        """Later figures of one message replace earlier ones (they are running totals)."""
        if self.current_message is None or not isinstance(usage, Mapping):
            return
        figures = self.streamed_usage.setdefault(self.current_message, {})
        for key in _USAGE_KEYS:
            value = usage.get(key)
            if isinstance(value, int) and value > 0:
                figures[key] = value

    def usage(self, result: ResultMessage) -> Mapping[str, Any]:
        """The turn's token counts: the result's, or what streamed when it reports none."""
        reported = result.usage or {}
        if any(int(reported.get(key) or 0) for key in _USAGE_KEYS):
            return reported
        return {
            key: sum(m.get(key, 0) for m in self.streamed_usage.values()) for key in _USAGE_KEYS
        }

    def _assistant(self, message: AssistantMessage) -> Iterator[AgentEvent]:
        if message.error is not None:
            # A synthetic message the CLI writes for a failed API call; the result follows.
            self.error = message
            return
        streamed = message.message_id is not None and message.message_id in self.streamed_messages
        for block in message.content:
            if isinstance(block, TextBlock) and not streamed and block.text:
                yield TextDelta(block.text)
            elif isinstance(block, ToolUseBlock):
                server, tool = split_tool_name(block.name)
                yield ToolCallStarted(block.id, block.name, server, tool, dict(block.input))

    def _tool_results(self, message: UserMessage, interrupted: bool) -> Iterator[AgentEvent]:
        if isinstance(message.content, str):
            return
        results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        # The CLI's record of a result (with the result's _meta and structuredContent)
        # comes with a message carrying that one result.
        record = message.tool_use_result if len(results) == 1 else None
        refused = refusal_reason(record)
        for block in results:
            yield ToolCallFinished(
                block.tool_use_id,
                result_text(block.content),
                bool(block.is_error),
                refused,
                content=result_blocks(block.content, record),
                interrupted=interrupted and bool(block.is_error),
            )

    def finish(
        self, result: ResultMessage, interrupted: bool, credentials: str, cost_usd: float
    ) -> AgentEvent:
        if result.is_error and not interrupted:
            return _error_for(result, self.error, credentials)
        usage = self.usage(result)
        return TurnFinished(
            session_id=result.session_id,
            cost_usd=cost_usd,
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            duration_ms=int(result.duration_ms),
            num_turns=int(result.num_turns),
            interrupted=interrupted,
        )


def _error_for(
    result: ResultMessage, failed: AssistantMessage | None, credentials: str
) -> AgentError:
    """A failed turn as the user should read it: what happened and what to do."""
    status = result.api_error_status
    code = failed.error if failed is not None else None
    detail = (result.result or _message_text(failed) or "; ".join(result.errors or [])).strip()
    if not detail:
        detail = f"the turn ended with {result.subtype}"
    lowered = detail.lower()
    kind: ErrorKind
    if status in AUTH_STATUSES or code == "authentication_failed":
        return rejected_credentials_error(credentials, status)
    if code == "billing_error":
        kind = "auth"
        message = f"The account has a billing problem: {detail}"
        hint = "Check the plan and credits of the account the key belongs to."
    elif status == 429 or code == "rate_limit":
        kind = "rate_limit"
        message = f"Rate limited: {detail}"
        hint = "Wait a minute, then send the message again; the conversation is kept."
    elif status == 529 or "overloaded" in lowered:
        kind = "overloaded"
        message = f"The API is overloaded: {detail}"
        hint = "This is temporary: send the message again in a moment; the conversation is kept."
    elif status is None and ("connection" in lowered or "econnrefused" in lowered):
        kind = "connection"
        message = f"Could not reach the API: {detail}"
        hint = "Check the network connection (and ANTHROPIC_BASE_URL if you set it), then retry."
    else:
        kind = "api"
        message = f"The API request failed: {detail}"
        hint = "Send the message again; the conversation is kept."
    return AgentError(kind, message, hint)


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _message_text(message: AssistantMessage | None) -> str:
    if message is None:
        return ""
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def _join_prompt(system_prompt: str, extra: str) -> str:
    """bassi's prompt plus the user's ``system_prompt_extra`` (unless already included)."""
    if not extra or extra in system_prompt:
        return system_prompt
    return f"{system_prompt}\n\n{extra}" if system_prompt else extra


# ------------------------------------------------------------------------------ past sessions

_environ_lock = threading.Lock()


@contextlib.contextmanager
def _cli_config_dir(settings: Settings) -> Iterator[None]:
    """Point the SDK's transcript readers at the config dir that ``settings.env`` gives the
    CLI. They find it only through ``os.environ``, so it is set there for the call, under a
    lock (the readers run in worker threads)."""
    config_dir = str(claude_config_dir(settings.env))
    with _environ_lock:
        saved = os.environ.get("CLAUDE_CONFIG_DIR")
        os.environ["CLAUDE_CONFIG_DIR"] = config_dir
        try:
            yield
        finally:
            if saved is None:
                del os.environ["CLAUDE_CONFIG_DIR"]
            else:
                os.environ["CLAUDE_CONFIG_DIR"] = saved


def recent_sessions(settings: Settings, limit: int = 20) -> list[SDKSessionInfo]:
    """Conversations in this project directory, newest first (for ``/resume``), read from the
    CLI's transcripts."""
    with _cli_config_dir(settings):
        return list_sessions(directory=str(settings.project_dir), limit=limit)


def session_messages(settings: Settings, session_id: str) -> list[SessionMessage]:
    """The user and assistant messages of an earlier conversation in this project, oldest
    first. Empty when its transcript is gone; raises what reading it raises (a transcript that
    is not UTF-8 raises ``UnicodeDecodeError``)."""
    with _cli_config_dir(settings):
        return get_session_messages(session_id, directory=str(settings.project_dir))
