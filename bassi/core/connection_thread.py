"""External servers' connections on a thread of their own, off the UI's event loop.

Thirty servers answering ``tools/list`` with hundreds of tools each cost seconds of CPU: their
output read and parsed, every tool validated, the definitions turned into the catalog's
records. On the event loop that draws the screen, that is seconds of a frozen screen. So each
external server's ``ServerConnection`` lives on one dedicated thread running an event loop of
its own (``ConnectionThread``), and the catalog holds a ``ThreadedConnection``: its coroutines
run over there and are awaited here through thread-safe futures (cancelling the await here
cancels the work there: a deadline, the user's interrupt), and every change comes back as
finished, immutable data (``ConnectionState``, the tools already ``ToolInfo`` records with their
digests and sizes worked out). What needs the person (a server's elicitation) and progress
reports are passed back to the UI's loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from bassi.core import foreground
from bassi.core.mcp_config import ServerConfig
from bassi.core.offers import PromptInfo, ResourceInfo, ResourceTemplateInfo
from bassi.core.registry import ServerStatus
from bassi.core.tools import Origin, ToolInfo

if TYPE_CHECKING:
    # The MCP client is imported where a connection is made: the catalog looks at this
    # module's classes before it loads the client (see ``Catalog.start``).
    from mcp import types

    from bassi.core.connections import (
        ElicitationHandler,
        ElicitationRequest,
        Progress,
        ServerConnection,
    )

_Result = TypeVar("_Result")


class ConnectionThread:
    """A daemon thread running the event loop the external servers' connections live on.
    Started on first use; ``stop`` ends it for good once every connection on it is closed."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.stopped = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self.stopped:
            raise RuntimeError("the connection thread was stopped")
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=_serve, args=(loop,), name="bassi mcp connections", daemon=True
            )
            self._loop, self._thread = loop, thread
            thread.start()
        return self._loop

    async def run(self, work: Coroutine[Any, Any, _Result]) -> _Result:
        """Run ``work`` on the connection loop and await its outcome on this one; cancelling
        the await cancels ``work``."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def call_soon(self, callback: Callable[..., object], *args: object) -> None:
        self.loop.call_soon_threadsafe(callback, *args)

    async def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        left = asyncio.all_tasks(loop)
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


if TYPE_CHECKING:
    SessionFactory: TypeAlias = Callable[
        [Callable[[ServerConnection], None], Callable[[], ElicitationHandler | None]],
        ServerConnection,
    ]
    """Makes the ``ServerConnection`` (its ``on_change`` and elicitation handler given)."""


@dataclass(frozen=True, slots=True)
class ConnectionState:
    """What the catalog follows of a connection, as it was at one change."""

    status: ServerStatus
    error: str | None
    detail: str | None
    protocol_version: str | None
    attempts: int
    tools: tuple[ToolInfo, ...]
    prompts: tuple[PromptInfo, ...]
    resources: tuple[ResourceInfo, ...]
    templates: tuple[ResourceTemplateInfo, ...]
    warnings: tuple[str, ...]


_STARTING = ConnectionState(ServerStatus.CONNECTING, None, None, None, 0, (), (), (), (), ())


class ThreadedConnection:
    """An external server's ``ServerConnection``, living on ``thread``, as the event loop
    that made this sees it: the same calls, and the state of its last change (``on_change``
    is called on this loop, in the order the changes happened)."""

    def __init__(
        self,
        spec: ServerConfig,
        thread: ConnectionThread,
        session: SessionFactory,
        on_change: Callable[[ThreadedConnection], None],
        elicitation: Callable[[], ElicitationHandler | None],
    ) -> None:
        self.spec = spec
        self.state = _STARTING
        self._thread = thread
        self._home = asyncio.get_running_loop()
        self._on_change = on_change
        self._elicitation = elicitation
        self._calls = 0
        self._listed: tuple[types.Tool, ...] = ()
        """The tool definitions ``state.tools`` was made from (read on the connection loop)."""
        self._tools: tuple[ToolInfo, ...] = ()
        self.inner = session(self._changed_there, self._elicitation_there)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def status(self) -> ServerStatus:
        return self.state.status

    @property
    def error(self) -> str | None:
        return self.state.error

    @property
    def protocol_version(self) -> str | None:
        return self.state.protocol_version

    @property
    def attempts(self) -> int:
        return self.state.attempts

    def start(self) -> None:
        """Begin connecting over there; it is "connecting" from now on, here too."""
        self.state = _STARTING
        self._on_change(self)
        self._thread.call_soon(self.inner.start)

    async def wait_attempt(self) -> None:
        await self._thread.run(self.inner.wait_attempt())

    async def close(self) -> None:
        if not self._thread.stopped:  # else it was closed with every other one
            await self._thread.run(self.inner.close())

    def cancel_calls(self) -> int:
        self._thread.call_soon(self.inner.cancel_calls)
        return self._calls

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the call's own deadline, kept over there)
        progress: Progress | None = None,
    ) -> types.CallToolResult:
        """As ``ServerConnection.call_tool``; progress is reported on this loop."""
        report: Progress | None = None
        if progress is not None:
            on_progress, home = progress, self._home

            def report(value: float, total: float | None, message: str | None) -> None:
                with suppress(RuntimeError):  # the app closed its loop meanwhile
                    home.call_soon_threadsafe(on_progress, value, total, message)

        self._calls += 1
        try:
            return await self._thread.run(
                self.inner.call_tool(tool, arguments, timeout=timeout, progress=report)
            )
        finally:
            self._calls -= 1

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
        return await self._thread.run(self.inner.get_prompt(name, arguments))

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._thread.run(self.inner.read_resource(uri))

    # On the connection loop.

    def _changed_there(self, connection: ServerConnection) -> None:
        if connection.tools is not self._listed:
            self._listed = connection.tools
            self._tools = tuple(_tool_info(self.name, tool) for tool in connection.tools)
        state = ConnectionState(
            connection.status,
            connection.error,
            connection.detail,
            connection.protocol_version,
            connection.attempts,
            self._tools,
            connection.prompts,
            connection.resources,
            connection.templates,
            connection.warnings,
        )
        with suppress(RuntimeError):  # the app closed its loop meanwhile
            self._home.call_soon_threadsafe(self._arrived, state)

    def _elicitation_there(self) -> ElicitationHandler | None:
        handler = self._elicitation()
        if handler is None:
            return None
        found, home = handler, self._home

        async def ask(request: ElicitationRequest) -> types.ElicitResult:
            async def answer() -> types.ElicitResult:
                return await found(request)

            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(answer(), home))

        return ask

    # Back on the loop that made this.

    def _arrived(self, state: ConnectionState) -> None:
        self.state = state
        self._on_change(self)


def _tool_info(server: str, tool: types.Tool) -> ToolInfo:
    """The catalog's record of a tool, with what later steps need of each definition (its
    digest, its size in the model's context) worked out here rather than on the UI's loop.
    Made from the validated fields rather than a dump of the whole tool: the same record (the
    schema is already plain JSON data) at a tenth of the time the interpreter lock is held."""
    annotations = tool.annotations
    definition = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
        if annotations is not None
        else None,
    }
    foreground.give_way()
    info = ToolInfo.from_mcp(server, definition, Origin.EXTERNAL)
    _ = info.definition_hash, info.definition_chars
    return info
