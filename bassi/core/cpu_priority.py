"""Processes bassi starts in the background give the CPU to the screen the person is using.

Thirty stdio servers starting together are thirty busy processes. Each runs in a session of
its own (so that it can be stopped with its whole process tree), and Linux schedules every
session as one group ("autogroup") weighing as much as bassi's own. On a two-core machine the
UI's thread got one thirty-first of the CPU while the servers imported their code, and the
screen froze for up to half a second at a time (``bench/loop_lag.py``). So a server's session
is lowered to the least CPU weight while it starts, and put back to what it was once the server
has answered: an idle server costs nothing, and one running a tool call competes as any other
program would. Lowering and restoring a session's weight needs no privilege; on systems without
autogroups (macOS, or scheduling by cgroups) both are no-ops.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

BACKGROUND_NICE = 19
"""The weakest weight: a starting server runs when the screen does not need the CPU."""


def _autogroup(pid: int) -> Path:
    return Path(f"/proc/{pid}/autogroup")


def session_nice(pid: int) -> int | None:
    """The scheduling niceness of the session ``pid`` leads, or None where there is none to
    read (no autogroups, or the process is gone)."""
    with suppress(OSError, ValueError, IndexError):
        return int(_autogroup(pid).read_text().split("nice")[1])
    return None


def set_session_nice(pid: int, nice: int) -> bool:
    """Give the session ``pid`` leads ``nice``; whether it took. Only for a process that leads
    a session of its own: any other would take bassi's whole session with it."""
    try:
        if os.getsid(pid) != pid:
            return False
        _autogroup(pid).write_text(str(nice))
    except (OSError, AttributeError):  # no such process; no sessions (Windows)
        return False
    return True


def lower_session(pid: int) -> int | None:
    """Lower the session to the background; returns its niceness before, to put back with
    ``set_session_nice``, or None when nothing was changed."""
    before = session_nice(pid)
    if before is None or before >= BACKGROUND_NICE:
        return None
    return before if set_session_nice(pid, BACKGROUND_NICE) else None


def lower_this_process() -> None:
    """For a helper process of bassi's own, from inside it: its session and itself to the
    background, for good (a helper only ever works in the background). Both, because which one
    weighs depends on the system: the session where autogroups schedule, the process where it
    shares a cgroup with bassi."""
    set_session_nice(os.getpid(), BACKGROUND_NICE)
    with suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, 0, BACKGROUND_NICE)
