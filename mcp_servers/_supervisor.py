"""Run one command so that nothing it starts outlives it (Linux).

``python -I -S _supervisor.py PARENT_PID COMMAND [ARG...]`` is what ``_process.run_process``
starts in place of the command. Killing the command's process group is not enough: a process
that calls ``setsid`` or forks twice leaves the group, and once its parent is gone it is
re-parented to PID 1, out of anyone's reach, free to keep running code after the tool call
ended or bassi quit. This supervisor makes itself a child subreaper, so every such orphan is
re-parented to it instead, and it kills them all.

It ends everything when the command exits (background jobs included), when it is asked to
stop (SIGTERM, SIGINT or SIGHUP: a timeout or a cancelled call), and when its parent dies,
even by SIGKILL (the parent-death signal, which the kernel sends when the parent *thread*
that started it exits; so it checks who its parent is before acting on it). Its own exit
status is the command's: the same exit code, or death by the same signal.

The standard library only, and no site-packages (``-S``); modules that are slow to import
(``pathlib``, ``typing``) are avoided, since every tool call waits for this
process to start.
Nothing here runs on other systems; there ``run_process`` falls back to killing the group.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from contextlib import suppress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36

PARENT_GONE = signal.SIGUSR2
"""The parent-death signal; also sent by anyone else, so it only means "check the parent"."""
STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
_WATCHED = STOP_SIGNALS | {signal.SIGCHLD, PARENT_GONE}
_RESET_FOR_COMMAND = _WATCHED | {signal.SIGPIPE, signal.SIGXFSZ}
"""Signals the command gets with their default action: Python ignores SIGPIPE and SIGXFSZ."""
_PARENT_CHECK_SECONDS = 1.0
_SWEEP_WAIT_SECONDS = 0.05
_SWEEP_LIMIT_SECONDS = 3.0
"""How long to keep killing: a process this user may not signal (a set-user-ID program that
changed its real user) would otherwise keep the supervisor, and the tool call, waiting."""
EXIT_NOT_STARTED = 127
EXIT_CANNOT_WATCH = 126


class _Children:
    """Reaps every child (the command and adopted orphans) and keeps the command's status."""

    def __init__(self, command: int) -> None:
        self.command = command
        self.status: int | None = None

    def reap(self) -> bool:
        """Collect every child that has ended; False once there are no children left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.command:
                self.status = status

    def wait_for_command(self, parent: int) -> None:
        """Until the command ends, a stop signal arrives or the parent is gone."""
        while self.reap() and self.status is None:
            info = signal.sigtimedwait(_WATCHED, _PARENT_CHECK_SECONDS)
            signo = info.si_signo if info is not None else None
            if signo in STOP_SIGNALS or (signo != signal.SIGCHLD and os.getppid() != parent):
                return

    def end_all(self) -> None:
        """Kill the command's group, then every child (adopted orphans included) until none
        is left. A killed process's own children are re-parented here, so rounds repeat."""
        _kill(self.command, group=True)
        give_up = time.monotonic() + _SWEEP_LIMIT_SECONDS
        while self.reap() and time.monotonic() < give_up:
            for pid in _children_of(os.getpid()):
                _kill(pid)
            signal.sigtimedwait({signal.SIGCHLD}, _SWEEP_WAIT_SECONDS)


def _kill(pid: int, *, group: bool = False) -> None:
    with suppress(OSError):  # already gone
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)


def _children_of(parent: int) -> list[int]:
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found  # no /proc: only the command's group was reached
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields start after the last ")".
        if int(text[text.rindex(")") + 2 :].split()[1]) == parent:
            found.append(int(name))
    return found


def _prctl(libc: ctypes.CDLL, option: int, value: int) -> None:
    if libc.prctl(option, value, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl({option}): {os.strerror(error)}")


def _exit_like(status: int | None, libc: ctypes.CDLL) -> NoReturn:
    """``status`` is None for a command that was sent SIGKILL but never seen to end."""
    if status is not None and os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    number = os.WTERMSIG(status) if status is not None else signal.SIGKILL
    # Die by the same signal, so the caller sees what the command saw; without a core file.
    _prctl(libc, _PR_SET_DUMPABLE, 0)
    if number not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
    os.kill(os.getpid(), number)
    os._exit(128 + number)


def main(argv: list[str]) -> NoReturn:
    if len(argv) < 3 or not argv[1].isdigit():
        sys.exit(f"usage: {argv[0]} PARENT_PID COMMAND [ARG...]")
    parent, command = int(argv[1]), argv[2:]
    # Blocked signals wait, pending, for sigtimedwait: none can arrive between two checks.
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        _prctl(libc, _PR_SET_CHILD_SUBREAPER, 1)
        _prctl(libc, _PR_SET_PDEATHSIG, PARENT_GONE)
    except OSError as exc:
        # Without these nothing could be guaranteed about what the command leaves behind.
        print(f"{argv[0]}: cannot watch the command's processes: {exc}", file=sys.stderr)
        os._exit(EXIT_CANNOT_WATCH)
    if os.getppid() != parent:
        sys.exit(f"{argv[0]}: the process that started this is gone")
    try:
        pid = os.posix_spawnp(
            command[0],
            command,
            os.environ,
            setsid=True,
            setsigmask=(),
            setsigdef=_RESET_FOR_COMMAND,
        )
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror or exc}", file=sys.stderr)
        os._exit(EXIT_NOT_STARTED)
    children = _Children(pid)
    children.wait_for_command(parent)
    children.end_all()
    _exit_like(children.status, libc)


if __name__ == "__main__":
    main(sys.argv)
