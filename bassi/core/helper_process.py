"""A child Python process of bassi's own, doing background work in an interpreter of its own.

Pure-Python work on a thread of the app holds the interpreter lock the screen's thread needs,
and work outside the lock still takes one of the machine's cores at the app's own weight: the
terminal stalls while servers start. In a child it has its own interpreter and runs at the
least CPU weight, and the app only writes a request and reads the answer back, blocking reads
that release the lock. A helper is spawned the way servers are, its session lowered before its
code runs (``cpu_priority.started_in_background``): lowered from inside, the kernel's rate limit
on changes of weight left the schema checker's session at the normal weight, where it weighed
as much as all of bassi while servers started (seen in ``/proc/PID/autogroup``). Each helper's
``__main__`` lowers its process too (``cpu_priority.lower_this_process``), which is what counts
where the system schedules by cgroup instead. A helper lives until its stdin closes
(``close``, or bassi exiting however it exits).

The protocol is one line per request, answered by one line or by a known number of raw bytes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from bassi.core import cpu_priority

logger = logging.getLogger(__name__)

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
"""The directory holding the ``bassi`` package, put on the child's path: bassi may be run from
a checkout that is not installed."""


class HelperProcess:
    """The parent's handle on one helper (``python -m module *args``), started on first use.
    Used from one thread at a time; ``close`` may come from another."""

    def __init__(self, module: str, *args: str, purpose: str) -> None:
        self._argv = [module, *args]
        self.purpose = purpose
        """What the helper does, for messages: "the schema checker"."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def worth_asking(self, items: int, start_cost: int) -> bool:
        """Whether to hand ``items`` to the helper: it runs already, or they are at least as
        many as starting it costs (counted in the same items done here)."""
        return self.running or items >= start_cost

    def request(self, line: bytes, *, reply_size: int | None = None) -> bytes:
        """Send ``line`` (no newline in it) and return the answer: one line, or exactly
        ``reply_size`` bytes. Raises OSError when the child cannot be started, stops
        answering or exits."""
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            if reply_size is None:
                answer = process.stdout.readline()
                complete = answer.endswith(b"\n")
            else:
                answer = process.stdout.read(reply_size)
                complete = len(answer) == reply_size
        except (OSError, ValueError) as exc:
            self.close()
            raise OSError(f"{self.purpose} stopped: {exc}") from exc
        if not complete:
            code = process.poll()
            self.close()
            raise OSError(f"{self.purpose} exited (code {code})")
        return answer

    def close(self) -> None:
        """Stop the child now. Safe to call from another thread while ``request`` waits: that
        call then raises OSError."""
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    logger.debug("closing %s's pipes", self.purpose, exc_info=True)

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p
            )
            argv = [sys.executable, "-m", *self._argv]
            lowered = cpu_priority.started_in_background(argv, env, Path.cwd())
            self._process = subprocess.Popen(
                lowered or argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
            if lowered is not None:
                cpu_priority.spawned_lowering(self._process.pid)
        return self._process
