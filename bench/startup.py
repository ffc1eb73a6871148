"""Start-up time of the chat app, against a minimal Textual app on the same machine.

Each program is started in a pseudo-terminal, as a person starts it, and the bytes it draws
are read as they come: the clock stops when the screen shows what was asked for. Programs
run one at a time, interleaved round by round, so machine load hits them alike.

- ``minimal``: an App that shows one line (the floor: Python, Textual, a first paint).
- ``bassi``: the chat app in a project whose ``.mcp.json`` has one external stdio server.
  ``skeleton`` is when the catalog shows bassi's own servers and the external one (names
  and status), ``in-process`` when every in-process server shows its tool count.

The first start in the project is a warm-up (it builds the search-index cache and writes
the compiled modules): the figures are for second and later starts. Compare two checkouts
in one run with ``--bassi``::

    .venv/bin/python bench/startup.py --rounds 5
    .venv/bin/python bench/startup.py --bassi before=../main/.venv/bin/bassi \\
        --bassi after=.venv/bin/bassi
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from corpus_server import approve_project

COLUMNS, LINES = 120, 40
TIMEOUT_S = 60.0
IN_PROCESS = ("bash", "task_automation", "web")
"""The servers bassi ships (``mcp_servers.SHIPPED_SERVERS``)."""
STATUS_ICONS = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏…●✗○?"
"""What the catalog puts before a server's name: a spinner frame while it connects, or its
status."""
MINIMAL_APP = """
from textual.app import App, ComposeResult
from textual.widgets import Static

class Minimal(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("minimal app ready")

Minimal().run()
"""
_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")

Check = Callable[[str], bool]


@dataclass
class Target:
    label: str
    command: list[str]
    marks: dict[str, Check]
    """What the screen must show, by name, in the order it is expected."""
    runs: list[dict[str, float]] = field(default_factory=list)
    """Per run: seconds until each mark showed (a mark never shown is missing)."""

    def times(self, mark: str) -> list[float]:
        return [run[mark] for run in self.runs if mark in run]


def shows(*patterns: str) -> Check:
    compiled = [re.compile(p) for p in patterns]
    return lambda text: all(p.search(text) for p in compiled)


def bassi_target(label: str, executable: str) -> Target:
    connected = [rf"● {name}\s+\d+ tools?" for name in IN_PROCESS]
    return Target(
        label,
        [executable],
        {
            "skeleton": shows(
                "bassi's own servers", rf"[{STATUS_ICONS}] bash", rf"[{STATUS_ICONS}] extra"
            ),
            "in-process": shows(*connected),
        },
    )


def run_once(target: Target, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Start the program in a pty; seconds until each mark showed; then quit it (ctrl+q)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    started = time.perf_counter()
    process = subprocess.Popen(
        target.command,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen: dict[str, float] = {}
    text = ""
    try:
        while len(seen) < len(target.marks) and time.perf_counter() - started < TIMEOUT_S:
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            text += _ESCAPES.sub(b"", data).decode("utf-8", errors="replace")
            now = time.perf_counter() - started
            for name, check in target.marks.items():
                if name not in seen and check(text):
                    seen[name] = now
    finally:
        _quit(process, master)
    return seen


def _quit(process: subprocess.Popen[bytes], master: int) -> None:
    try:
        os.write(master, b"\x11")  # ctrl+q: bassi stops its servers on the way out
        deadline = time.perf_counter() + 15
        while process.poll() is None and time.perf_counter() < deadline:
            select.select([master], [], [], 0.1)
            try:
                os.read(master, 65536)
            except OSError:
                break
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        os.close(master)


def project(root: Path, python: str) -> Path:
    path = root / "project"
    path.mkdir(parents=True)
    server = {"command": python, "args": ["-m", "mcp_servers.bash", str(path)]}
    (path / ".mcp.json").write_text(json.dumps({"mcpServers": {"extra": server}}))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--bassi",
        action="append",
        metavar="LABEL=PATH",
        help="a bassi executable to time (repeat to compare); default: this venv's",
    )
    args = parser.parse_args()
    here = Path(sys.executable).parent
    given = args.bassi or [f"bassi={here / 'bassi'}"]
    with tempfile.TemporaryDirectory(prefix="bassi-startup-") as tmp:
        root = Path(tmp)
        # PYTHONDONTWRITEBYTECODE is left out too: a person's bassi keeps its compiled
        # modules (the warm-up start writes them), and without them every start would
        # compile the checkout again, by how much depending on its state.
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("ANTHROPIC_", "CLAUDE_", "BASSI_"))
            and key != "PYTHONDONTWRITEBYTECODE"
        }
        env |= {
            "HOME": str(root / "home"),
            "BASSI_CONFIG_DIR": str(root / "config"),
            "TERM": "xterm-256color",
            "COLUMNS": str(COLUMNS),
            "LINES": str(LINES),
        }
        minimal = root / "minimal_app.py"
        minimal.write_text(MINIMAL_APP)
        targets = [Target("minimal", [sys.executable, str(minimal)], {"paint": shows("ready")})]
        for spec in given:
            label, _, executable = spec.partition("=")
            targets.append(bassi_target(label, str(Path(executable).resolve())))
        projects = {t.label: project(root / t.label, sys.executable) for t in targets[1:]}
        for target in targets[1:]:
            approve_project(projects[target.label], env, target.command)
            run_once(target, projects[target.label], env)  # warm-up: the index cache
        for round_number in range(args.rounds):
            order = targets if round_number % 2 == 0 else targets[::-1]
            for target in order:
                target.runs.append(run_once(target, projects.get(target.label, root), env))
        report(targets, args.rounds)
    return 0


def report(targets: list[Target], rounds: int) -> None:
    floor = statistics.median(targets[0].times("paint") or [float("nan")])
    print(f"start-up, median of {rounds} rounds (seconds; x = times the minimal app's paint)")
    print(f"{'program':<12} {'mark':<12} {'median':>7} {'min':>7} {'max':>7} {'x':>6}  runs")
    for target in targets:
        for name in target.marks:
            times = target.times(name)
            if not times:
                print(f"{target.label:<12} {name:<12} {'never shown':>23}")
                continue
            median = statistics.median(times)
            print(
                f"{target.label:<12} {name:<12} {median:7.2f} {min(times):7.2f} "
                f"{max(times):7.2f} {median / floor:6.2f}  {len(times)}/{rounds}"
            )
        gaps = [r["in-process"] - r["skeleton"] for r in target.runs if len(r) == 2]
        if gaps:
            print(f"{target.label:<12} {'skel→conn':<12} {statistics.median(gaps):7.2f}")


if __name__ == "__main__":
    sys.exit(main())
