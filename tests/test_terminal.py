"""The real ``bassi`` on a real pseudo-terminal: signals restore the terminal, shut the servers
down and exit with a meaningful status; Ctrl+C never prints a traceback; a terminal the app
cannot use gets a clear message."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bassi.core.settings import Settings
from tests.conftest import approve_project, make_agent_env
from tests.discovery_fixtures import marked_processes, new_marker, stdio_entry, write_config
from tests.terminal import Terminal, wait_until

ALL_CONNECTED = "servers 4/4"
"""The status bar once bassi's three servers and the project's are connected (bassi's own
connect first: "connected" on screen says nothing of the project's server)."""


@pytest.fixture
def marker() -> str:
    return new_marker()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return make_agent_env(tmp_path / "home", None, api_key=None)


@pytest.fixture
def project(tmp_path: Path, marker: str, env: dict[str, str]) -> Path:
    """An approved project with one stdio server (found again by ``marker``), no API key."""
    path = tmp_path / "project"
    path.mkdir()
    write_config(path, {"good": stdio_entry("good_server.py", marker=marker)})
    approve_project(Settings(project_dir=path, env=env))
    return path


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for terminal in started:
        terminal.close()


@pytest.mark.parametrize(
    ("number", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")]
)
def test_a_signal_restores_the_terminal_and_shuts_the_servers_down(
    project: Path,
    env: dict[str, str],
    marker: str,
    terminals: list[Terminal],
    number: int,
    name: str,
) -> None:
    app = Terminal([], cwd=project, env=env)
    terminals.append(app)
    app.wait_for("good")
    app.wait_for(ALL_CONNECTED)
    assert marked_processes(marker), "the server should be running"

    app.signal(number)
    status = app.wait()

    assert status == 128 + number
    assert app.modes_left_on() == []
    assert app.after_restore() == f"bassi: stopped by {name}; the servers were shut down."
    assert "Traceback" not in app.text
    assert marked_processes(marker) == []


def test_a_closed_terminal_still_shuts_the_servers_down(
    project: Path, env: dict[str, str], marker: str, terminals: list[Terminal]
) -> None:
    app = Terminal([], cwd=project, env=env)
    terminals.append(app)
    app.wait_for(ALL_CONNECTED)
    assert marked_processes(marker)

    app.hang_up()
    app.signal(signal.SIGHUP)

    assert app.wait() == 128 + signal.SIGHUP
    assert marked_processes(marker) == []


@pytest.mark.parametrize("when", ["while starting", "as the screen appears", "once running"])
def test_ctrl_c_at_any_moment_ends_with_one_line_and_status_130(
    project: Path, env: dict[str, str], marker: str, terminals: list[Terminal], when: str
) -> None:
    """SIGINT is what Ctrl+C sends before the app owns the terminal (after that, the app
    reads Ctrl+C as a key)."""
    app = Terminal([], cwd=project, env=env)
    terminals.append(app)
    if when == "while starting":  # the log is opened just before the runtime is built
        wait_until(lambda: (project / ".bassi" / "bassi.log").exists())
    elif when == "as the screen appears":
        app.wait_for_output("\x1b[?1049h")
    elif when == "once running":
        app.wait_for(ALL_CONNECTED)

    app.signal(signal.SIGINT)

    assert app.wait() == 130
    assert "Traceback" not in app.text
    assert app.text.rstrip().endswith("bassi: interrupted") or app.after_restore() == (
        "bassi: interrupted; the servers were shut down."
    )
    assert app.modes_left_on() == []
    assert marked_processes(marker) == []


def test_ctrl_c_in_bassi_tools_ends_with_one_line_and_status_130(
    tmp_path: Path, env: dict[str, str], marker: str, terminals: list[Terminal]
) -> None:
    project = tmp_path / "slow"
    project.mkdir()
    write_config(
        project,
        {
            "good": stdio_entry("good_server.py", marker=marker),
            "slow": stdio_entry("hang_server.py", marker=marker, timeout=300),
        },
    )
    approve_project(Settings(project_dir=project, env=env))
    tools = Terminal(["tools", "list"], cwd=project, env=env)
    terminals.append(tools)
    wait_until(lambda: len(marked_processes(marker)) == 2)

    tools.signal(signal.SIGINT)

    assert tools.wait() == 130
    assert tools.text.strip() == "bassi: interrupted"
    assert marked_processes(marker) == []


def test_the_app_needs_a_terminal_and_says_what_works_without_one(
    project: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "bassi"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert piped.returncode == 2
    assert piped.stdout == ""
    assert piped.stderr.startswith(
        "bassi: the chat app needs an interactive terminal "
        "(standard input, output and error are not terminals)."
    )
    assert "`bassi tools list`" in piped.stderr

    dumb = Terminal([], cwd=project, env=env, term="dumb")
    terminals.append(dumb)
    assert dumb.wait() == 2
    assert dumb.output.startswith("bassi: the chat app needs an interactive terminal (TERM=dumb")
    assert "\x1b" not in dumb.output


def test_a_file_named_bassi_costs_warnings_not_the_start(
    project: Path, env: dict[str, str], marker: str, terminals: list[Terminal]
) -> None:
    (project / ".bassi").write_text("not a directory")
    app = Terminal([], cwd=project, env=env, size=(160, 40))
    terminals.append(app)
    app.wait_for("no log file this run")
    app.wait_for(ALL_CONNECTED)
    app.write("/help\r")
    app.wait_for("is not a directory")  # the history could not be saved: said once
    app.write("\x11")  # Ctrl+Q

    assert app.wait() == 0
    assert app.modes_left_on() == []
    assert "Traceback" not in app.text
    assert marked_processes(marker) == []
    assert (project / ".bassi").read_text() == "not a directory"
