"""The real ``bassi`` command on a pseudo-terminal: what it writes to the terminal (escape
sequences included), its exit status, and the processes it leaves."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tests.conftest import HANG_SECONDS

# Modes the app turns on that a terminal must not be left in: the alternate screen, mouse
# reporting (every mode Textual sets), bracketed paste, focus events, a hidden cursor.
MODES_ON_OFF = {
    "alternate screen": ("\x1b[?1049h", "\x1b[?1049l"),
    "mouse reporting": ("\x1b[?1000h", "\x1b[?1000l"),
    "any-event mouse": ("\x1b[?1003h", "\x1b[?1003l"),
    "SGR mouse": ("\x1b[?1006h", "\x1b[?1006l"),
    "bracketed paste": ("\x1b[?2004h", "\x1b[?2004l"),
    "focus events": ("\x1b[?1004h", "\x1b[?1004l"),
    "hidden cursor": ("\x1b[?25l", "\x1b[?25h"),
}
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[PX^_].*?\x1b\\|.)", re.DOTALL)


def wait_until(condition: Callable[[], bool], seconds: float = HANG_SECONDS) -> None:
    """Poll ``condition``; fail after ``seconds``, which only a hang should reach."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {seconds} s for {condition}")
        time.sleep(0.05)


class Terminal:
    """``bassi args...`` running on a pty of ``size`` (columns, rows)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        size: tuple[int, int] = (100, 30),
        term: str = "xterm-256color",
    ) -> None:
        master, slave = os.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bassi", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={**env, "TERM": term, "COLUMNS": str(columns), "LINES": str(rows)},
            start_new_session=True,
        )
        os.close(slave)
        self._master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._hung_up = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._hung_up.is_set():
            if not select.select([self._master], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: every end of the slave is closed
                return
            if not chunk:
                return
            with self._lock:
                self._output.extend(chunk)

    @property
    def output(self) -> str:
        """Everything written to the terminal so far, escape sequences included."""
        with self._lock:
            return self._output.decode("utf-8", "replace")

    @property
    def text(self) -> str:
        """The output without escape sequences (words the app drew, in drawing order)."""
        return _ESCAPES.sub("", self.output)

    def wait_for(self, needle: str, seconds: float = HANG_SECONDS) -> None:
        """Until ``needle`` is in the text drawn so far; fails after ``seconds`` (a hang)."""
        wait_until(lambda: needle in self.text or self.process.poll() is not None, seconds)
        assert needle in self.text, (
            f"{needle!r} never appeared (exit status {self.process.poll()}); "
            f"text so far: {self.text[-2000:]!r}"
        )

    def wait_for_output(self, needle: str, seconds: float = HANG_SECONDS) -> None:
        """Until ``needle`` (escape sequences included) was written."""
        wait_until(lambda: needle in self.output or self.process.poll() is not None, seconds)
        assert needle in self.output, f"{needle!r} was never written"

    def write(self, data: str) -> None:
        os.write(self._master, data.encode())

    def hang_up(self) -> None:
        """Close the terminal's side, as when its window is closed: from now on the app's
        writes fail."""
        self._hung_up.set()
        self._reader.join()
        os.close(self._master)

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def wait(self, seconds: float = HANG_SECONDS) -> int:
        """The exit status once the process ended (and the output is all read)."""
        status = self.process.wait(timeout=seconds)
        self._reader.join(timeout=seconds)
        return status

    def close(self) -> None:
        """Make sure nothing is left, whatever the test did."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        with contextlib.suppress(OSError):
            os.close(self._master)

    def modes_left_on(self) -> list[str]:
        """Terminal modes the output turned on and did not turn off again afterwards."""
        out = self.output
        return [
            mode
            for mode, (on, off) in MODES_ON_OFF.items()
            if on in out and out.rfind(off) < out.rfind(on)
        ]

    def after_restore(self) -> str:
        """The text written after the app gave the normal screen back (its last words)."""
        out = self.output
        return _ESCAPES.sub("", out[out.rfind("\x1b[?1049l") :]).strip()
