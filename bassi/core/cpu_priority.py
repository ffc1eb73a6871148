"""Processes bassi starts in the background give the CPU to the screen the person is using.

Thirty stdio servers starting together are thirty busy processes. Each runs in a session of
its own (so that it can be stopped with its whole process tree), and Linux schedules every
session as one group ("autogroup") weighing as much as bassi's own. On a two-core machine the
UI's thread got one thirty-first of the CPU while the servers imported their code, and the
screen froze for up to half a second at a time (``bench/loop_lag.py``). So a server's session
is lowered to the least CPU weight while it starts, and put back to the normal weight once the
server has answered: an idle server costs nothing, and one running a tool call competes as any
other program would. Lowering and restoring a session's weight needs no privilege; on systems
without autogroups (macOS, or scheduling by cgroups) both are no-ops.

Without CAP_SYS_ADMIN (any ordinary user) Linux takes one change of a session's weight per
tenth of a second, system-wide, and refuses the others with EAGAIN. So thirty servers spawned
together take their turns to be lowered before their code runs (``_LOWER_THEN_EXEC``), and a
refused restore is tried again until it takes: a server must never be left running its tool
calls at the background weight. Restores wait while a server bassi spawned still waits for
its turn to be lowered: a restore taking that turn kept the other server from starting.

The lowering happens inside the new process, before the server's own code runs. Lowering it
from bassi after the spawn came too late: bassi learns of a new process only once its event
loop has connected the pipes, and with thirty spawns queued the first servers imported at full
weight for over a second, which froze the screen all the same.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from functools import cache
from pathlib import Path

import anyio

BACKGROUND_NICE = 19
"""The weakest weight: a starting server runs when the screen does not need the CPU."""
NEW_SESSION_NICE = 0
"""What the kernel gives every new session: the weight a started server goes back to."""
WEIGHT_CHANGE_INTERVAL = 0.1
"""How often Linux lets a process without CAP_SYS_ADMIN change a session's weight (any
session's: the limit is system-wide)."""
_SHELL = Path("/bin/sh")
LOWERING_TRIES = 30
"""How many turns a starting server's shell waits for (one per ``WEIGHT_CHANGE_INTERVAL``, at
most three seconds) before the server starts at the normal weight after all."""
_LOWER_THEN_EXEC = (
    f"n={LOWERING_TRIES}; until echo {BACKGROUND_NICE} 2>/dev/null >/proc/self/autogroup; do"
    f' n=$((n - 1)); [ "$n" -gt 0 ] || break; sleep {WEIGHT_CHANGE_INTERVAL}; done;'
    ' exec "$0" "$@"'
)
"""Lowers the shell's new session, then replaces the shell with the program. ``exec`` keeps
the process, so the pid bassi tracks, signals and restores is the server's. The program and
its arguments arrive as the shell's parameters, never inside its script, so nothing in them
is interpreted. A refused write is tried again at the kernel's next turn: of thirty servers
spawned together, the first imports while the others wait for theirs, instead of all but one
importing at full weight beside the screen. Where the write keeps failing (a read-only
``/proc``) the server starts at the normal weight."""


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


_LOWERING_DEADLINE = 2 * LOWERING_TRIES * WEIGHT_CHANGE_INTERVAL
"""Seconds after its spawn that a server's shell counts as waiting for its turn at most: its
tries, with room for the ``sleep`` it runs between them on a loaded machine. A server whose
shell gave up (a read-only ``/proc``) holds the restores back no longer."""
_lowering: dict[int, float] = {}
"""The servers spawned to lower themselves, by pid, with the time they stop counting."""
_lowering_lock = threading.Lock()


def spawned_lowering(pid: int) -> None:
    """``pid`` was spawned with ``started_in_background``'s command: until its session is
    lowered, restores of other sessions leave the kernel's turns to it."""
    with _lowering_lock:
        _lowering[pid] = time.monotonic() + _LOWERING_DEADLINE


def _still_lowering() -> bool:
    """Whether a server bassi spawned still waits for its turn to be lowered. Forgets the ones
    lowered, gone or past their deadline, up to the first still waiting: every waiting restore
    asks ten times a second, so one answer costs one read of ``/proc`` most times."""
    now = time.monotonic()
    with _lowering_lock:
        for pid, deadline in list(_lowering.items()):
            if now < deadline and session_nice(pid) == NEW_SESSION_NICE:
                return True
            del _lowering[pid]
        return False


async def restore_session(pid: int) -> None:
    """Give a session lowered by ``started_in_background`` the weight of a new session back,
    once no other server waits to be lowered first, trying again while the kernel refuses (see
    the module's notes on its rate limit). Returns at once for a session that was never
    lowered, and once the process is gone."""
    with _lowering_lock:
        _lowering.pop(pid, None)  # it answered, so its own lowering is over
    # The kernel's clock, not an event, says when to try again.
    while session_nice(pid) == BACKGROUND_NICE and (  # noqa: ASYNC110
        _still_lowering() or not set_session_nice(pid, NEW_SESSION_NICE)
    ):
        await anyio.sleep(WEIGHT_CHANGE_INTERVAL)


_AUTOGROUPS_ENABLED = Path("/proc/sys/kernel/sched_autogroup_enabled")


@cache
def schedules_by_session() -> bool:
    """Whether the kernel weighs sessions against each other (and there is a shell to lower
    them with): asked once, not at every spawn. Asked of the system, not of bassi's own
    session: a process that init started without a session of its own (a CI runner, a
    service) is in the root group, which has no weight to read, while every server it spawns
    gets a session that has one."""
    with suppress(OSError):
        return _AUTOGROUPS_ENABLED.read_text().strip() == "1" and os.access(_SHELL, os.X_OK)
    return False


def started_in_background(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path
) -> list[str] | None:
    """The command line that runs ``argv`` in a new session lowered from its first instruction
    (to be spawned with ``start_new_session``), or None where it cannot be: no autogroups, no
    ``/bin/sh``, or a program the system will not find. Such a program is spawned directly, so
    that the system reports why it cannot start exactly as it would have."""
    if not schedules_by_session():
        return None
    program = argv[0]
    if os.path.dirname(program):
        found = os.access(cwd / program, os.X_OK) and (cwd / program).is_file()
    else:
        found = shutil.which(program, path=os.pathsep.join(os.get_exec_path(env))) is not None
    return [str(_SHELL), "-c", _LOWER_THEN_EXEC, *argv] if found else None


def lower_this_process() -> None:
    """For a helper process of bassi's own, from inside it: its session and itself to the
    background, for good (a helper only ever works in the background). Both, because which one
    weighs depends on the system: the session where autogroups schedule, the process where it
    shares a cgroup with bassi. A session ``started_in_background`` already lowered is left
    alone: another write would only take a turn of the kernel's from a starting server."""
    if session_nice(os.getpid()) not in (None, BACKGROUND_NICE):
        set_session_nice(os.getpid(), BACKGROUND_NICE)
    with suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, 0, BACKGROUND_NICE)
