"""How many stdio servers start at once.

A starting server is a busy process (an interpreter importing its code, a package manager
resolving one), and thirty of them starting together outnumber the screen's thread on the
run queue: lowered as their sessions are, each still runs the slice the kernel gives it once
picked, and the UI's thread waited 35-55 ms behind them for a core (``bench/loop_lag.py``, read
from ``/proc/PID/task/*/schedstat``). A few at a time keep the cores busy with the same work.

A slot is held from the spawn until the server has listed its tools, or ``HOLD_SECONDS`` at
most: a server that hangs, or waits on the network (an install), is not using the CPU, and
must not hold the others back for its whole timeout. A server's own timeout starts once it has
its slot. Servers reached over HTTP spawn nothing and take no slot.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from weakref import WeakKeyDictionary

import anyio

SLOTS = max(4, 2 * (os.cpu_count() or 1))
"""Two per core: while one server waits on its disk or pipe, another computes."""
HOLD_SECONDS = 2.0
"""The longest a server holds its turn before it has listed its tools (see above)."""
_semaphores: WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.Semaphore] = WeakKeyDictionary()
"""Servers started on one event loop share its slots (the app starts them all on one)."""


class StartSlot:
    """One server's turn to start; released once, whichever comes first."""

    def __init__(self, semaphore: anyio.Semaphore | None) -> None:
        self._semaphore = semaphore

    def release(self) -> None:
        semaphore, self._semaphore = self._semaphore, None
        if semaphore is not None:
            semaphore.release()

    async def release_after(self, seconds: float) -> None:
        await anyio.sleep(seconds)
        self.release()


async def take(spawns: bool, waiting: Callable[[], None]) -> StartSlot:
    """Wait for a turn to start a server that ``spawns`` a process, calling ``waiting`` first
    if it has to wait (a person with many servers should see why one is slow to start); one
    that does not spawn (HTTP, in-process) gets a slot that holds nothing."""
    if not spawns:
        return StartSlot(None)
    loop = asyncio.get_running_loop()
    semaphore = _semaphores.get(loop)
    if semaphore is None:
        semaphore = _semaphores[loop] = anyio.Semaphore(SLOTS)
    if semaphore.value == 0:
        waiting()
    await semaphore.acquire()
    return StartSlot(semaphore)
