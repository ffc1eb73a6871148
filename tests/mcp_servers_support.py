"""Connecting tests to bassi's shipped servers, both ways they run: in process over mcp's
memory transport (what the Agent SDK bridge does inside bassi) and as ``python -m
mcp_servers.<name>`` over stdio (what any other MCP client does)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_servers import SHIPPED_SERVERS
from tests.discovery_fixtures import marked_processes, new_marker, text_of

TRANSPORTS = ("memory", "stdio")
POLL = 0.05

T = TypeVar("T")


@asynccontextmanager
async def connect(
    name: str, transport: str, project_dir: Path, env: Mapping[str, str] | None = None
) -> AsyncIterator[Client]:
    """A client connected to a fresh ``name`` server. ``env`` is the server's environment on
    top of the test process's. ``mode="legacy"`` is the initialize handshake, which is what the
    Claude Code CLI speaks to MCP servers."""
    env = dict(env or {})
    server: Any
    if transport == "memory":
        server = SHIPPED_SERVERS[name](project_dir, env={**os.environ, **env})
    else:
        server = StdioServerParameters(
            command=sys.executable,
            args=["-m", f"mcp_servers.{name}"],
            cwd=project_dir,
            env={**os.environ, **env},
        )
    async with Client(server, mode="legacy") as client:
        yield client


@asynccontextmanager
async def held_open(open_cm: Callable[[], AbstractAsyncContextManager[T]]) -> AsyncIterator[T]:
    """Keep a context manager entered in a task of its own.

    A module-scoped fixture is set up and torn down in different tasks, and anyio refuses to
    leave a task group from another task than the one that entered it; holding the client in
    its own task lets a module share one stdio server (about half a second to start).
    """
    ready: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def hold() -> None:
        try:
            async with open_cm() as value:
                ready.set_result(value)
                await release.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        release.set()
        await holder


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), text_of(result)


def live_group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that still run. Zombies do not count: once killed, a
    process whose parent is gone waits for PID 1 to reap it, which in a container may never
    happen, yet it runs nothing and holds nothing."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, _ppid, pgrp = text.rpartition(")")[2].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):
            members.append(int(stat.parent.name))
    return members


@contextmanager
def escape_marker() -> Iterator[str]:
    """A marker for the processes a test lets escape from a command (``setsid``, a double
    fork): they are no longer anyone's descendants, so ``no_leftover_processes`` cannot see
    them, but they inherit the marker in their environment. Whatever still carries it when
    the test ends is killed, so a failing test does not leave them running."""
    marker = new_marker()
    try:
        yield marker
    finally:
        for pid in marked_processes(marker):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def parent_of(pid: int) -> int:
    return int((Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[1])


async def wait_for_file(path: Path, within: float = 10.0) -> str:
    """The content of ``path`` once a command has written it."""
    file = anyio.Path(path)
    for _ in range(int(within / POLL)):
        if await file.exists() and (text := (await file.read_text()).strip()):
            return text
        await anyio.sleep(POLL)
    raise AssertionError(f"{path} was not written within {within} s")


async def until_group_gone(pgid: int, within: float = 5.0) -> None:
    """Wait until no process of group ``pgid`` runs any more; fail if one still does."""
    for _ in range(int(within / POLL)):
        if not live_group_members(pgid):
            return
        await anyio.sleep(POLL)
    assert live_group_members(pgid) == []
