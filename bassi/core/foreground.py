"""Background threads let the foreground loop (the screen) finish what it is doing first.

bassi's background threads (MCP connections, reply parsing, the tool index) share one
interpreter lock with the loop that draws the screen. A thread waiting for the lock takes it
from the one holding it every 5 ms, so while three background threads were busy, a screen
update of 20 ms of work took 80-120 ms to reach the terminal (``bench/loop_lag.py``). Python
threads have no priorities; instead a background thread calls ``give_way()`` wherever it can
pause. Once per ``SLICE`` of time, that asks the foreground loop to run an empty
callback and waits until it has: the loop runs everything already due before it, so an update
under way finishes without contention, and the thread then has the lock to itself while the
loop is idle. Waits are bounded by ``MAX_WAIT``, so a loop that is busy for long, blocked or
closed never stops background work.

Between those turns the interpreter's own switching decides, and the loop's thread, which
mostly waits for input and wakes many times a second, needed the lock back after each wake:
a background thread running Python code gives it up only at the end of its switch interval.
So while a loop is attached the interval is ``SWITCH_INTERVAL`` instead of Python's 5 ms.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from contextlib import suppress

SLICE = 0.004
"""Seconds between two turns a background thread gives the loop: shorter than the
interpreter's default switch interval, so the loop never waits a whole one for the lock. Wall
time, not the thread's CPU time: reading that clock is a system call, ten times the cost."""
SWITCH_INTERVAL = 0.001
"""The interpreter's switch interval while a loop is attached. With 30 servers starting
(``bench/loop_lag.py`` as an ordinary user, alternated with 5 ms) the worst stall fell from
51-60 to 37-49 ms warm and from 71-90 to 63-91 ms cold, with the tools searchable as soon."""
MAX_WAIT = 0.1
"""The longest a background thread waits for the loop's turn before going on anyway."""

_foreground: tuple[asyncio.AbstractEventLoop, int] | None = None
_switch_before: float | None = None
_turns = threading.local()


def attach(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` (running on this thread) the one background work gives way to."""
    global _foreground, _switch_before
    _foreground = (loop, threading.get_ident())
    if _switch_before is None:
        _switch_before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)


def detach(loop: asyncio.AbstractEventLoop) -> None:
    """``loop`` is going away: background threads stop waiting for it, and the interpreter
    switches threads as it did before."""
    global _foreground, _switch_before
    if _foreground is not None and _foreground[0] is loop:
        _foreground = None
        if _switch_before is not None:
            sys.setswitchinterval(_switch_before)
            _switch_before = None


def give_way() -> None:
    """From a background thread, at a point where it may pause: once per ``SLICE`` of its
    work, wait until the foreground loop has run what was due (at most ``MAX_WAIT``). Costs a
    clock read otherwise, so it can be called once per item of a long loop. A no-op on the
    foreground thread itself and where there is no foreground loop (``bassi tools``, tests)."""
    foreground = _foreground
    if foreground is None:
        return
    now = time.perf_counter()
    if now - getattr(_turns, "since", -SLICE) < SLICE:
        return
    loop, thread = foreground
    if thread == threading.get_ident():
        return
    done = threading.Event()
    with suppress(RuntimeError):  # the loop closed meanwhile
        loop.call_soon_threadsafe(done.set)
        done.wait(MAX_WAIT)
    _turns.since = time.perf_counter()
