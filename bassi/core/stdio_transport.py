"""A stdio MCP server as a subprocess whose exit bassi can explain.

mcp's own ``stdio_client`` hides the process it starts, but a person whose server failed needs
to see its exit code and the last lines it wrote to stderr, and that stderr must not reach the
terminal, which the TUI owns. So bassi starts the process itself: stdout carries newline-
delimited JSON-RPC, stderr goes into a small in-memory tail, and lines on stdout that are not
JSON-RPC (a stray ``print``) are kept for the failure message instead of breaking the session.

Shutdown follows the MCP spec: close stdin, give the server a moment to exit, then terminate
its whole process group (it runs in a session of its own), so nothing outlives bassi.
"""

from __future__ import annotations

import json
import logging
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from bassi.core import cpu_priority, foreground
from bassi.core.safe_text import clean

EXIT_GRACE = 2.0
"""Seconds a running server gets to exit by itself once its stdin is closed."""
KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for its process group."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A longer line is dropped: a server streaming without newlines must not eat all memory."""
PARSE_OFF_LOOP_BYTES = 64 * 1024
"""A longer message (a ``tools/list`` answer with hundreds of tools) is parsed in a worker
thread: parsing it holds the event loop for tens of milliseconds, and many servers answer
at once when bassi starts."""
_STDERR_TAIL_BYTES = 16 * 1024
_NOISE_LINES = 3
_NOISE_CHARS = 200


def _parse(line: bytes) -> types.JSONRPCMessage:
    """The message on one line. ``json.loads`` then validating the objects is the same
    check as pydantic's ``validate_json`` in a third of the time, and it is the time the
    interpreter lock is held in one piece that stalls the UI (a megabyte of tool list:
    about 30 ms against 10). Raises ValueError (pydantic's ValidationError is one) for a
    line that is not a JSON-RPC message, RecursionError for one nested too deep to parse.
    Each step holds the lock in one piece, so the screen gets its turn before each."""
    foreground.give_way()
    parsed = json.loads(line)
    foreground.give_way()
    return types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)


class ServerProcess:
    """What bassi knows about a running (or finished) stdio server process."""

    def __init__(self, process: Process, log: logging.Logger | None = None) -> None:
        self._process = process
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._log = log
        """Where each stderr line goes too (the project's log file), if anywhere."""
        self._stderr_partial = b""
        self.exit_grace = 0.0
        """Seconds the server gets to exit by itself once its stdin closes. Zero until it
        answered ``initialize``: a server that never started has nothing to save, and a hung
        one would only delay shutdown."""
        self.stdout_closed = False
        self.stopped_by_bassi = False
        """True once bassi started terminating the process; its exit code is then ours."""
        self.noise: deque[str] = deque(maxlen=_NOISE_LINES)
        """The last lines on stdout that were not JSON-RPC."""

    async def started(self) -> None:
        """The server has answered: its session gets the weight of any new session back
        (``bassi.core.cpu_priority``), as soon as the kernel lets it."""
        await cpu_priority.restore_session(self._process.pid)

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def exit_description(self) -> str | None:
        """Why the server ended ("exited with code 1", "was killed by SIGKILL"), or None
        while it runs or when bassi stopped it."""
        code = self.returncode
        if code is None or self.stopped_by_bassi:
            return None
        if code < 0:
            with suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
            return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def stderr_tail(self, lines: int = 10) -> str:
        """The last non-empty lines the server wrote to stderr."""
        text = b"".join(self._stderr).decode("utf-8", errors="replace")
        return "\n".join([line.rstrip() for line in text.splitlines() if line.strip()][-lines:])

    async def wait_exit(self, seconds: float) -> bool:
        """Whether the process ended within ``seconds``. Polls ``returncode`` because
        ``Process.wait`` also waits for the pipes, which a grandchild may hold open."""
        with anyio.move_on_after(seconds):
            while self._process.returncode is None:  # noqa: ASYNC110 (no event to wait on)
                await anyio.sleep(0.01)
        return self._process.returncode is not None

    def _add_stderr(self, chunk: bytes) -> None:
        if self._log is not None:
            *lines, self._stderr_partial = (self._stderr_partial + chunk).split(b"\n")
            self._stderr_partial = self._stderr_partial[-_STDERR_TAIL_BYTES:]
            for line in lines:
                if line.strip():
                    text = clean(line.decode("utf-8", errors="replace"), max_chars=2_000)
                    self._log.info("%s", text.rstrip())
        self._stderr.append(chunk)
        self._stderr_size += len(chunk)
        while self._stderr_size > _STDERR_TAIL_BYTES and len(self._stderr) > 1:
            self._stderr_size -= len(self._stderr.popleft())

    def _add_noise(self, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        self.noise.append(text if len(text) <= _NOISE_CHARS else text[:_NOISE_CHARS] + "…")


@asynccontextmanager
async def open_stdio_server(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    log: logging.Logger | None = None,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
        ServerProcess,
    ]
]:
    """Start the server and yield the session's streams and the process handle.

    Raises OSError when the process cannot be started (``FileNotFoundError`` with the command
    as ``filename`` when it does not exist). ``log`` gets each line the server writes to
    stderr."""
    # Shielded: a cancellation landing during the spawn would lose the new process. From
    # here to the ``try`` below there is no await, so it cannot land in between either.
    lowered_argv = cpu_priority.started_in_background([command, *args], env, cwd)
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            lowered_argv or [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    if lowered_argv is not None:
        cpu_priority.spawned_lowering(process.pid)
    handle = ServerProcess(process, log)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    delivering = True

    async def deliver(line: bytes) -> None:
        nonlocal delivering
        if not line.strip():
            return
        try:
            if len(line) > PARSE_OFF_LOOP_BYTES:
                message = await anyio.to_thread.run_sync(_parse, line)
            else:
                message = _parse(line)
        except (ValueError, RecursionError):  # not JSON-RPC (or nested past parsing): noise
            handle._add_noise(line)
            return
        if delivering:
            try:
                await read_send.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                # The session is gone; keep draining so the server is never blocked on a
                # full pipe while it tries to exit.
                delivering = False

    async def read_stdout() -> None:
        assert process.stdout is not None
        partial: list[bytes] = []
        partial_size = 0
        async with read_send:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                while True:
                    try:
                        chunk = await process.stdout.receive()
                    except anyio.EndOfStream:
                        handle.stdout_closed = True
                        await deliver(b"".join(partial))
                        return
                    *lines, rest = chunk.split(b"\n")
                    if lines:
                        lines[0] = b"".join([*partial, lines[0]])
                        partial, partial_size = [], 0
                    partial.append(rest)
                    partial_size += len(rest)
                    if partial_size > MAX_LINE_BYTES:
                        handle._add_noise(b"".join(partial)[:_NOISE_CHARS])
                        partial, partial_size = [], 0
                    for line in lines:
                        await deliver(line)

    async def read_stderr() -> None:
        assert process.stderr is not None
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                handle._add_stderr(await process.stderr.receive())

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_receive:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for session_message in write_receive:
                    data = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    await process.stdin.send(data.encode() + b"\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stdout)
        tg.start_soon(read_stderr)
        tg.start_soon(write_stdin)
        try:
            yield read_receive, write_send, handle
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, handle)
                read_receive.close()
                write_send.close()
            tg.cancel_scope.cancel()


async def _stop(process: Process, handle: ServerProcess) -> None:
    """Close stdin, wait for a voluntary exit, then terminate the whole process group."""
    assert process.stdin is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    # A server that closed its stdout is on its way out: let it finish, so its own exit code
    # is what gets reported.
    if await handle.wait_exit(EXIT_GRACE if handle.stdout_closed else handle.exit_grace):
        return
    handle.stopped_by_bassi = True
    await terminate_posix_process_tree(process, KILL_GRACE)
    await handle.wait_exit(KILL_GRACE)
