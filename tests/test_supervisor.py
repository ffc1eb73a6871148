"""``mcp_servers/_supervisor.py`` on its own: what the tool servers' tests cannot easily reach."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from mcp_servers._process import SUPERVISED, supervised

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor runs on Linux only")


def test_the_command_outlives_the_thread_that_started_it(tmp_path: Path) -> None:
    """The kernel sends the parent-death signal when the parent *thread* ends. A tool call
    started from a worker thread must still run to its end while the process lives."""
    running, done = tmp_path / "running", tmp_path / "done"
    command = ["sh", "-c", f"touch {running}; sleep 1; echo finished > {done}"]
    started: list[subprocess.Popen[bytes]] = []

    def start_and_leave() -> None:
        started.append(subprocess.Popen(supervised(command)))
        deadline = time.monotonic() + 60
        while not running.exists() and time.monotonic() < deadline:
            time.sleep(0.01)

    thread = threading.Thread(target=start_and_leave)
    thread.start()
    thread.join()
    assert running.exists()
    assert started[0].wait(timeout=60) == 0
    assert done.read_text() == "finished\n"


@pytest.mark.parametrize(
    ("script", "status"), [("exit 3", 3), ("kill -INT $$", -2), ("kill -KILL $$", -9)]
)
def test_the_exit_status_is_the_commands(script: str, status: int) -> None:
    assert subprocess.run(supervised(["sh", "-c", script]), timeout=60).returncode == status


def test_a_missing_command_is_reported() -> None:
    result = subprocess.run(
        supervised(["no-such-command-anywhere"]), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 127
    assert result.stderr.startswith("no-such-command-anywhere: No such file or directory")
