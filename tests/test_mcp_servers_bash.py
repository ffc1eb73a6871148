"""The shipped ``bash`` server, over stdio and in process."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client

from mcp_servers._process import SUPERVISED
from tests.conftest import HANG_SECONDS
from tests.discovery_fixtures import MARKER_VARIABLE, marked_processes, until
from tests.mcp_servers_support import (
    TRANSPORTS,
    call,
    connect,
    escape_marker,
    held_open,
    live_group_members,
    parent_of,
    until_group_gone,
    wait_for_file,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

CREDENTIALS = {
    "ANTHROPIC_API_KEY": "sk-ant-api-3f9c1e",
    "ANTHROPIC_AUTH_TOKEN": "auth-8d2b7a",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-6e4f0c",
    "ANTHROPIC_CUSTOM_HEADERS": "Authorization: Bearer hdr-1a9d5b",
}
"""In the server's environment, as they are in bassi's: commands must not see them."""
ENV = {
    "BASSI_BASH_TIMEOUT": "2",
    "BASSI_BASH_MAX_TIMEOUT": "30",
    "BASSI_OUTPUT_LIMIT": "2000",
    "PROJECT_SETTING": "kept",
    **CREDENTIALS,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("project").resolve()
    (project / "sub").mkdir()
    return project


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=TRANSPORTS)
async def client(request: pytest.FixtureRequest, project: Path) -> AsyncIterator[Client]:
    async with held_open(lambda: connect("bash", request.param, project, ENV)) as client:
        yield client


async def test_runs_in_the_project_and_reports_exit_code_stdout_and_stderr(
    client: Client, project: Path
) -> None:
    is_error, text = await call(client, "execute", {"command": "echo hello; echo oops >&2; pwd"})
    assert not is_error
    status, rest = text.split("\n", 1)
    assert status.startswith("Exit code 0")
    assert rest == f"--- stdout ---\nhello\n{project}\n--- stderr ---\noops"


async def test_non_zero_exit_is_an_error_result_with_the_code(client: Client) -> None:
    is_error, text = await call(client, "execute", {"command": "echo partial; exit 7"})
    assert is_error
    assert text.startswith("Exit code 7")
    assert "partial" in text


async def test_timeout_kills_the_whole_process_group(client: Client, project: Path) -> None:
    marker = project / "timeout.pgid"
    started = time.monotonic()
    is_error, text = await call(
        client,
        "execute",
        {"command": f"echo $$ > {marker}; sleep 60 & sleep 60", "timeout": 1},
    )
    assert time.monotonic() - started < HANG_SECONDS
    assert is_error
    assert text.startswith("Timed out after 1 s")
    await until_group_gone(int(marker.read_text()))


async def test_default_timeout_comes_from_the_environment(client: Client) -> None:
    started = time.monotonic()
    is_error, text = await call(client, "execute", {"command": "sleep 60"})
    assert time.monotonic() - started < HANG_SECONDS
    assert is_error
    assert text.startswith("Timed out after 2 s")


async def test_timeout_above_the_maximum_is_refused(client: Client) -> None:
    is_error, text = await call(client, "execute", {"command": "true", "timeout": 31})
    assert is_error
    assert "maximum of 30 s" in text


async def test_output_is_capped_keeping_head_and_tail(client: Client) -> None:
    is_error, text = await call(client, "execute", {"command": "seq 1 100000"})
    assert not is_error
    stdout = text.split("--- stdout ---\n", 1)[1].split("\n--- stderr ---", 1)[0]
    assert stdout.startswith("1\n2\n3\n")
    assert stdout.endswith("99999\n100000")
    total = sum(len(f"{n}\n") for n in range(1, 100001))
    assert f"bytes cut; {total} bytes in all" in stdout
    assert len(stdout) < 2000 + 100


@pytest.mark.parametrize("command", ["read line; echo read=$?", "cat; echo cat=$?"])
async def test_a_command_waiting_for_input_gets_end_of_file(client: Client, command: str) -> None:
    _, text = await call(client, "execute", {"command": command, "timeout": 10})
    assert text.startswith("Exit code 0")  # not "Timed out after 10 s": it did not wait
    assert ("read=1" if command.startswith("read") else "cat=0") in text


async def test_background_jobs_do_not_outlive_the_command(client: Client, project: Path) -> None:
    marker = project / "background.pgid"
    started = time.monotonic()
    is_error, text = await call(
        client, "execute", {"command": f"echo $$ > {marker}; sleep 60 & echo started"}
    )
    assert time.monotonic() - started < HANG_SECONDS
    assert not is_error
    assert "started" in text
    await until_group_gone(int(marker.read_text()))


async def test_cwd_is_relative_to_the_project(client: Client, project: Path) -> None:
    is_error, text = await call(client, "execute", {"command": "pwd", "cwd": "sub"})
    assert not is_error
    assert f"{project / 'sub'}\n" in text


async def test_missing_cwd_is_a_clear_error(client: Client) -> None:
    is_error, text = await call(client, "execute", {"command": "pwd", "cwd": "no/such/dir"})
    assert is_error
    assert "'no/such/dir' is not a directory" in text


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({}, "command: Field required"),
        ({"command": ""}, "command: String should have at least 1 character"),
        (
            {"command": "true", "timeout": "soon"},
            "timeout: Input should be a valid number, unable to parse string as a number",
        ),
        ({"command": "true", "timeout": 0}, "timeout: Input should be greater than 0"),
        ({"command": "true", "shell": "zsh"}, "shell: Extra inputs are not permitted"),
    ],
)
async def test_invalid_arguments_are_error_results(
    client: Client, arguments: dict[str, object], complaint: str
) -> None:
    is_error, text = await call(client, "execute", arguments)
    assert is_error
    assert text == f"Invalid arguments for execute: {complaint}"


async def test_server_survives_errors(client: Client) -> None:
    is_error, text = await call(client, "no_such_tool", {})
    assert is_error
    assert "Unknown tool 'no_such_tool'" in text
    is_error, text = await call(client, "execute", {"command": "echo still here"})
    assert not is_error
    assert "still here" in text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_closing_the_connection_kills_a_running_command(
    transport: str, tmp_path: Path
) -> None:
    marker = tmp_path / "pgid"
    async with connect("bash", transport, tmp_path) as client:
        running = asyncio.create_task(
            client.call_tool("execute", {"command": f"echo $$ > {marker}; sleep 60 & sleep 60"})
        )
        pgid = int(await wait_for_file(marker))
        assert live_group_members(pgid) != []
        running.cancel()
    await until_group_gone(pgid)


def server_of(shell_pid: int) -> int:
    """The server process that ran a command (its supervisor's parent, where there is one)."""
    parent = parent_of(shell_pid)
    return parent_of(parent) if SUPERVISED else parent


def escapes(marker: str) -> str:
    """Shell lines that leave the command's process group three ways, each starting a
    ``sleep`` that carries ``marker`` in its environment: ``setsid``, a double fork into a new
    session, and a background job under job control (a process group of its own). They end
    once all three run."""
    ready = [f"{marker}.{n}" for n in (1, 2, 3)]
    return (
        f"export {MARKER_VARIABLE}={marker}; "
        f"setsid sh -c 'touch {ready[0]}; exec sleep 60' & "
        f"(setsid sh -c 'touch {ready[1]}; exec sleep 60' &); "
        f"set -m; (touch {ready[2]}; exec sleep 60) & set +m; "
        f"until [ -e {ready[0]} ] && [ -e {ready[1]} ] && [ -e {ready[2]} ]; do sleep 0.05; done; "
    )


linux_only = pytest.mark.skipif(
    not SUPERVISED, reason="only Linux can reach processes that left the group"
)


@linux_only
async def test_detached_processes_do_not_outlive_the_command(client: Client) -> None:
    with escape_marker() as marker:
        is_error, text = await call(
            client, "execute", {"command": escapes(marker) + "echo started", "timeout": 20}
        )
        assert not is_error
        assert "--- stdout ---\nstarted\n" in text
        assert marked_processes(marker) == []


@linux_only
async def test_detached_processes_do_not_outlive_a_timeout(client: Client) -> None:
    with escape_marker() as marker:
        is_error, text = await call(
            client,
            "execute",
            {"command": escapes(marker) + "echo started; sleep 60", "timeout": 4},
        )
        assert is_error
        assert text.startswith("Timed out after 4 s")
        assert "--- stdout ---\nstarted\n" in text
        assert marked_processes(marker) == []


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
async def test_a_stopped_stdio_server_takes_a_running_command_along(
    stop: signal.Signals, tmp_path: Path
) -> None:
    """SIGTERM lets the server cancel the call; SIGKILL cleans nothing up, and still what the
    command started dies, on Linux even what escaped its group."""
    if stop is signal.SIGKILL and not SUPERVISED:
        pytest.skip("only the supervisor outlives a server killed by SIGKILL")
    ids = tmp_path / "ids"
    with escape_marker() as marker:
        async with connect("bash", "stdio", tmp_path) as client:
            escaping = escapes(marker) if SUPERVISED else ""
            command = escaping + f"echo $$ > {ids}; sleep 60"
            running = asyncio.create_task(client.call_tool("execute", {"command": command}))
            pgid = int(await wait_for_file(ids))
            os.kill(server_of(pgid), stop)
            await until_group_gone(pgid)
            await until(lambda: marked_processes(marker) == [])
            running.cancel()


async def test_commands_do_not_see_the_agents_credentials(client: Client) -> None:
    command = "env | grep -E '^(ANTHROPIC|CLAUDE|PROJECT)' | sort"
    is_error, text = await call(client, "execute", {"command": command})
    assert not is_error
    assert "--- stdout ---\nPROJECT_SETTING=kept\n--- stderr ---" in text
    for name, value in CREDENTIALS.items():
        assert name not in text
        assert value not in text


async def test_a_command_killed_by_a_signal_is_reported_as_such(client: Client) -> None:
    is_error, text = await call(client, "execute", {"command": "echo before; kill -TERM $$"})
    assert is_error
    assert text.startswith("Killed by signal SIGTERM")
    assert "before" in text
