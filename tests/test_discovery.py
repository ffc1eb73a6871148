"""Discovery against real servers: stdio subprocesses from ``tests/servers``, in-process servers
over the in-memory transport, and real streamable-HTTP and SSE servers on 127.0.0.1.

Each test checks what a person would see: the status, the failure reason, the tools, the
answer of a call, and that no server process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bassi.core import cpu_priority, start_slots
from bassi.core.connections import WAITING_FOR_TURN, ServerConnection, ServerSpec
from bassi.core.cpu_priority import (
    BACKGROUND_NICE,
    WEIGHT_CHANGE_INTERVAL,
    session_nice,
    set_session_nice,
)
from bassi.core.in_process import InProcessServer
from bassi.core.mcp_config import HttpServerConfig, StdioServerConfig, parse_mcp_config
from bassi.core.registry import ServerStatus
from tests.conftest import HANG_SECONDS, descendant_pids
from tests.discovery_fixtures import (
    MARKER_VARIABLE,
    SERVERS,
    lowlevel_server,
    marked_processes,
    new_marker,
    program_of,
    serving,
    text_of,
    tool,
    until,
)


def stdio(
    name: str, script: str, *args: str, timeout: float = 20, **fields: Any
) -> StdioServerConfig:
    return StdioServerConfig(
        name=name,
        command=sys.executable,
        args=(str(SERVERS / script), *args),
        timeout=timeout,
        **fields,
    )


class Connections:
    """Connections made by one test, all closed (and their processes checked) at its end."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.marker = new_marker()
        self.opened: list[ServerConnection] = []

    def open(self, spec: ServerSpec, env: dict[str, str] | None = None) -> ServerConnection:
        environment = {**os.environ, MARKER_VARIABLE: self.marker, **(env or {})}
        connection = ServerConnection(spec, env=environment, project_dir=self.project)
        self.opened.append(connection)
        connection.start()
        return connection

    async def ready(self, spec: ServerSpec, env: dict[str, str] | None = None) -> ServerConnection:
        connection = self.open(spec, env)
        await connection.wait_attempt()
        return connection

    async def close(self) -> None:
        for connection in self.opened:
            await connection.close()
        assert marked_processes(self.marker) == []


@pytest.fixture
async def connections(tmp_path: Path) -> AsyncIterator[Connections]:
    opened = Connections(tmp_path)
    yield opened
    await opened.close()


# stdio


async def test_a_good_stdio_server_connects_and_lists_its_tools(
    connections: Connections,
) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    assert good.status is ServerStatus.CONNECTED
    assert good.error is None
    assert [t.name for t in good.tools] == ["echo", "add", "fail", "where", "sleep"]
    add = next(t for t in good.tools if t.name == "add")
    assert add.description == "Add two integers.\nReturns their sum."
    assert add.input_schema["required"] == ["a"]
    assert set(add.input_schema["properties"]) == {"a", "b"}


async def test_the_session_stays_open_for_calls_and_the_server_runs_once(
    connections: Connections,
) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    [pid] = marked_processes(connections.marker)
    first = await good.call_tool("add", {"a": 2, "b": 40})
    second = await good.call_tool("echo", {"text": "hi"})
    assert (text_of(first), first.is_error) == ("42", False)
    assert text_of(second) == "hi"
    assert marked_processes(connections.marker) == [pid]


async def test_error_results_come_back_as_the_server_sent_them(connections: Connections) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    failed = await good.call_tool("fail", {})
    assert failed.is_error
    assert "fail" in text_of(failed)
    unknown = await good.call_tool("no_such_tool", {})
    assert unknown.is_error
    assert "no_such_tool" in text_of(unknown)
    assert good.status is ServerStatus.CONNECTED


async def test_a_call_that_takes_too_long_is_an_error_but_the_server_stays_connected(
    connections: Connections,
) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    slow = await good.call_tool("sleep", {"seconds": 5}, timeout=0.5)
    assert slow.is_error
    assert "did not answer within 0.5 s" in text_of(slow)
    assert good.status is ServerStatus.CONNECTED
    assert text_of(await good.call_tool("echo", {"text": "still here"})) == "still here"


async def test_both_pages_of_a_paginated_tool_list_are_discovered(
    connections: Connections,
) -> None:
    paged = await connections.ready(stdio("paged", "paged_server.py"))
    assert paged.status is ServerStatus.CONNECTED
    assert [t.name for t in paged.tools] == [
        "alpha_one",
        "alpha_two",
        "alpha_three",
        "beta_one",
        "beta_two",
    ]


async def test_a_server_that_exits_at_once_reports_its_exit_code_and_stderr(
    connections: Connections,
) -> None:
    gone = await connections.ready(stdio("gone", "exit_server.py"))
    assert gone.status is ServerStatus.FAILED
    assert gone.error is not None
    assert gone.error.startswith("exited with code 3")
    assert "Error: GITHUB_TOKEN is not set" in gone.error
    assert "exit_server: starting" in gone.error


async def test_a_server_that_hangs_fails_after_its_timeout_and_is_killed(
    connections: Connections,
) -> None:
    started = time.monotonic()
    hung = await connections.ready(stdio("hung", "hang_server.py", timeout=1.5))
    elapsed = time.monotonic() - started
    assert hung.status is ServerStatus.FAILED
    assert hung.error is not None
    assert hung.error.startswith("timed out after 1.5 s")
    assert "waiting for a licence server" in hung.error
    assert 1.5 <= elapsed < HANG_SECONDS
    # It never answered, so it gets no grace period: it is gone once it failed.
    await until(lambda: marked_processes(connections.marker) == [], seconds=HANG_SECONDS)


async def can_lower_sessions() -> bool:
    """Whether this system schedules by session and lets a session be lowered (not every
    kernel or container does; then bassi leaves priorities alone). Returns once the kernel
    takes the next change of weight again (without CAP_SYS_ADMIN it takes one per
    ``WEIGHT_CHANGE_INTERVAL``, system-wide)."""
    if not cpu_priority.schedules_by_session():
        return False
    with session_of_its_own() as probe:
        if not await until_lowered(probe, turns=3):
            return False
        await asyncio.sleep(WEIGHT_CHANGE_INTERVAL)
        return session_nice(probe) == BACKGROUND_NICE


async def until_lowered(pid: int, turns: int = 5) -> bool:
    """Lowers ``pid``'s session as soon as the kernel takes it (a change made elsewhere just
    before, a restore say, may have had the last turn); whether it took within ``turns``."""
    for _ in range(turns):
        await asyncio.sleep(WEIGHT_CHANGE_INTERVAL)
        if set_session_nice(pid, BACKGROUND_NICE):
            return True
    return False


@contextmanager
def session_of_its_own() -> Iterator[int]:
    """The pid of an idle process leading a new session, killed on leaving."""
    process = subprocess.Popen(
        [sys.executable, "-c", "input()"], stdin=subprocess.PIPE, start_new_session=True
    )
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


async def test_a_starting_server_yields_the_cpu_and_gets_it_back_once_it_answered(
    connections: Connections, tmp_path: Path
) -> None:
    """Thirty servers importing at once must not starve the screen (``cpu_priority``)."""
    if not await can_lower_sessions():
        pytest.skip("this system does not schedule by session, or will not let it be lowered")
    connections.open(stdio("hung", "hang_server.py"))
    # Found once the server runs its own program, not while the shell before it still does.
    await until(
        lambda: (
            [program_of(pid) for pid in marked_processes(connections.marker)] == [sys.executable]
        )
    )
    [starting] = marked_processes(connections.marker)
    assert session_nice(starting) == BACKGROUND_NICE
    # Spawned together: where the kernel takes one change of weight per tenth of a second,
    # each waits for its turn. A name a shell would expand or split: the arguments must
    # reach the server unchanged.
    reports = [tmp_path / f"started in $HOME; `x` $(x) 'q' {n}.txt" for n in range(3)]
    await asyncio.gather(
        *(
            connections.ready(stdio(f"good{n}", "good_server.py", "--started-in", str(report)))
            for n, report in enumerate(reports)
        )
    )
    # Lowered before the servers' own code ran, not some time after bassi saw them start.
    assert [r.read_text().split()[-2:] for r in reports] == [["nice", str(BACKGROUND_NICE)]] * 3
    answered = set(marked_processes(connections.marker)) - {starting}
    assert len(answered) == 3
    # What a new session starts with, once the kernel takes each restore.
    await until(lambda: [session_nice(pid) for pid in answered] == [0, 0, 0])
    assert session_nice(starting) == BACKGROUND_NICE


async def test_servers_start_lowered_though_bassi_has_no_session_weight_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A process init started without a session of its own (as CI runners and services are)
    is in the kernel's root group, whose autogroup file is empty: its servers still get
    sessions of their own, and must still start lowered."""
    if not await can_lower_sessions():
        pytest.skip("this system does not schedule by session, or will not let it be lowered")
    root_group = tmp_path / "autogroup"
    root_group.write_text("")
    real_autogroup = cpu_priority._autogroup
    me = os.getpid()
    monkeypatch.setattr(
        cpu_priority, "_autogroup", lambda pid: root_group if pid == me else real_autogroup(pid)
    )
    cpu_priority.schedules_by_session.cache_clear()
    assert session_nice(me) is None
    argv = [sys.executable, "-c", "print(open('/proc/self/autogroup').read().split()[-1])"]
    command = cpu_priority.started_in_background(argv, os.environ, tmp_path)
    assert command is not None, "the server would start at the normal weight"
    started = await asyncio.create_subprocess_exec(
        *command, stdout=subprocess.PIPE, start_new_session=True
    )
    printed, _ = await asyncio.wait_for(started.communicate(), HANG_SECONDS)
    assert printed.decode().strip() == str(BACKGROUND_NICE)


async def test_a_restore_the_kernel_refuses_is_tried_again_until_it_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linux refuses changes of a session's weight made less than a tenth of a second after
    another (without CAP_SYS_ADMIN): a server must not be left at the background weight."""
    if not await can_lower_sessions():
        pytest.skip("this system does not schedule by session, or will not let it be lowered")
    with session_of_its_own() as server:
        assert set_session_nice(server, BACKGROUND_NICE)
        attempts: list[int] = []

        def refused_twice(pid: int, nice: int) -> bool:
            attempts.append(nice)
            return len(attempts) > 2 and set_session_nice(pid, nice)

        monkeypatch.setattr(cpu_priority, "set_session_nice", refused_twice)
        await asyncio.wait_for(cpu_priority.restore_session(server), HANG_SECONDS)
        assert session_nice(server) == cpu_priority.NEW_SESSION_NICE
        assert attempts == [cpu_priority.NEW_SESSION_NICE] * 3
        await asyncio.wait_for(cpu_priority.restore_session(server), HANG_SECONDS)
        assert len(attempts) == 3, "a session at the normal weight is left alone"


async def test_restores_leave_the_kernels_turns_to_servers_still_waiting_to_be_lowered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the kernel taking one change of weight per tenth of a second, a restore taking a
    turn kept a starting server from being lowered: thirty servers were searchable seconds
    later. A restore waits until no server bassi spawned still waits for its turn, or until
    that server's shell has had time enough to give up."""
    if not await can_lower_sessions():
        pytest.skip("this system does not schedule by session, or will not let it be lowered")
    with session_of_its_own() as answered, session_of_its_own() as starting:
        assert set_session_nice(answered, BACKGROUND_NICE)
        cpu_priority.spawned_lowering(starting)
        restoring = asyncio.create_task(cpu_priority.restore_session(answered))
        await asyncio.sleep(5 * WEIGHT_CHANGE_INTERVAL)
        assert session_nice(answered) == BACKGROUND_NICE, "restored before the other was lowered"
        assert await until_lowered(starting)
        await asyncio.wait_for(restoring, HANG_SECONDS)
        assert session_nice(answered) == cpu_priority.NEW_SESSION_NICE
    with session_of_its_own() as answered, session_of_its_own() as given_up:
        await asyncio.sleep(WEIGHT_CHANGE_INTERVAL)
        assert set_session_nice(answered, BACKGROUND_NICE)
        monkeypatch.setattr(cpu_priority, "_LOWERING_DEADLINE", 3 * WEIGHT_CHANGE_INTERVAL)
        cpu_priority.spawned_lowering(given_up)
        await asyncio.wait_for(cpu_priority.restore_session(answered), HANG_SECONDS)
        assert session_nice(answered) == cpu_priority.NEW_SESSION_NICE
        assert session_nice(given_up) == cpu_priority.NEW_SESSION_NICE


async def test_a_program_that_cannot_be_found_is_named_though_servers_start_lowered(
    connections: Connections, tmp_path: Path
) -> None:
    """The lowering shell is only put in front of a program the system will find, so a
    missing or unrunnable one fails with the system's own reason."""
    not_runnable = tmp_path / "server.sh"
    not_runnable.write_text("#!/bin/sh\n")
    missing = await connections.ready(StdioServerConfig(name="a", command="./no-such-server"))
    plain = await connections.ready(StdioServerConfig(name="b", command=str(not_runnable)))
    assert missing.error == "command not found: ./no-such-server"
    assert plain.error == f"permission denied running {not_runnable}"


async def test_garbage_on_stdout_is_named_in_the_failure(connections: Connections) -> None:
    garbage = await connections.ready(stdio("garbage", "garbage_server.py", timeout=1.5))
    assert garbage.status is ServerStatus.FAILED
    assert garbage.error is not None
    assert garbage.error.startswith("timed out after 1.5 s")
    assert "not MCP" in garbage.error
    assert "500 Internal Server Error" in garbage.error


async def test_a_stray_line_on_stdout_does_not_break_a_working_server(
    connections: Connections,
) -> None:
    noisy = await connections.ready(stdio("noisy", "good_server.py", "--banner"))
    assert noisy.status is ServerStatus.CONNECTED
    assert text_of(await noisy.call_tool("echo", {"text": "ok"})) == "ok"


async def test_a_missing_command_is_named(connections: Connections) -> None:
    spec = StdioServerConfig(name="nope", command="no-such-mcp-server-xyz")
    missing = await connections.ready(spec)
    assert missing.status is ServerStatus.FAILED
    assert missing.error == "command not found: no-such-mcp-server-xyz"


async def test_a_missing_working_directory_is_named(
    connections: Connections, tmp_path: Path
) -> None:
    spec = stdio("lost", "good_server.py", cwd=tmp_path / "not-there")
    lost = await connections.ready(spec)
    assert lost.status is ServerStatus.FAILED
    assert lost.error == f"working directory not found: {tmp_path / 'not-there'}"


async def test_the_server_gets_the_environment_its_entry_sets_and_runs_in_the_project(
    connections: Connections, tmp_path: Path
) -> None:
    spec = stdio("good", "good_server.py", env={"GREETING": "hello from config"})
    good = await connections.ready(spec, env={"INHERITED": "from bassi"})
    greeting = text_of(await good.call_tool("where", {"variable": "GREETING"}))
    assert greeting == f"GREETING=hello from config cwd={tmp_path}"
    inherited = text_of(await good.call_tool("where", {"variable": "INHERITED"}))
    assert inherited.startswith("INHERITED=from bassi ")


async def test_the_agents_credentials_stay_out_of_a_servers_environment(
    connections: Connections,
) -> None:
    """A server a cloned repository names must not read the Anthropic key; the user can still
    hand one to a server by naming it in the entry's own "env"."""
    credentials = {
        "ANTHROPIC_API_KEY": "sk-ant-api-test",
        "ANTHROPIC_AUTH_TOKEN": "auth-test",
        "CLAUDE_CODE_OAUTH_TOKEN": "oauth-test",
    }
    plain = await connections.ready(stdio("plain", "good_server.py"), env=credentials)
    for name in credentials:
        reported = text_of(await plain.call_tool("where", {"variable": name}))
        assert reported.startswith(f"{name}=<unset> ")
    assert text_of(await plain.call_tool("where", {"variable": "PATH"})).startswith(
        f"PATH={os.environ['PATH']} "
    )
    entry = stdio("given", "good_server.py", env={"ANTHROPIC_API_KEY": "sk-ant-api-test"})
    given = await connections.ready(entry, env=credentials)
    reported = text_of(await given.call_tool("where", {"variable": "ANTHROPIC_API_KEY"}))
    assert reported.startswith("ANTHROPIC_API_KEY=sk-ant-api-test ")


async def test_a_failure_reason_masks_what_the_entry_took_from_the_environment(
    connections: Connections, tmp_path: Path
) -> None:
    """The server echoes its command line on stderr, as many do when they fail."""
    entry = {"command": sys.executable, "args": [str(SERVERS / "exit_server.py"), "${TOKEN}"]}
    document = json.dumps({"mcpServers": {"gone": entry}})
    secret = "tok-" + connections.marker
    config = parse_mcp_config(
        document, tmp_path / ".mcp.json", {"TOKEN": secret}, project_dir=tmp_path
    )
    gone = await connections.ready(config.servers["gone"])
    assert gone.status is ServerStatus.FAILED
    assert gone.error is not None
    assert "exit_server: starting ${TOKEN}" in gone.error
    assert secret not in gone.error
    result = await gone.call_tool("echo", {"text": "x"})
    assert result.is_error
    assert "${TOKEN}" in text_of(result)
    assert secret not in text_of(result)


async def test_a_server_that_crashes_mid_call_is_marked_failed_and_can_be_reconnected(
    connections: Connections,
) -> None:
    crashy = await connections.ready(stdio("crashy", "crash_server.py"))
    assert crashy.status is ServerStatus.CONNECTED
    result = await crashy.call_tool("crash", {})
    assert result.is_error
    assert "stopped during the call: exited with code 7" in text_of(result)
    assert "out of cheese" in text_of(result)
    assert crashy.status is ServerStatus.FAILED
    assert crashy.error is not None
    assert crashy.error.startswith("exited with code 7")
    # Its tools are still known, so the catalog can show them as unavailable.
    assert [t.name for t in crashy.tools] == ["echo", "crash"]
    down = await crashy.call_tool("echo", {"text": "x"})
    assert down.is_error
    assert "not available: exited with code 7" in text_of(down)

    await crashy.reconnect()
    assert crashy.status is ServerStatus.CONNECTING
    await crashy.wait_attempt()
    assert crashy.status is ServerStatus.CONNECTED
    assert text_of(await crashy.call_tool("echo", {"text": "back"})) == "back"


async def test_a_server_killed_while_idle_is_marked_failed_without_any_call(
    connections: Connections,
) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    [pid] = marked_processes(connections.marker)
    os.kill(pid, signal.SIGKILL)
    await until(lambda: good.status is ServerStatus.FAILED)
    assert good.error == "was killed by SIGKILL"
    result = await good.call_tool("echo", {"text": "x"})
    assert result.is_error
    assert "not available: was killed by SIGKILL" in text_of(result)


async def test_a_call_while_connecting_says_so(connections: Connections) -> None:
    hung = connections.open(stdio("hung", "hang_server.py", timeout=30))
    result = await hung.call_tool("anything", {})
    assert result.is_error
    assert text_of(result) == "server 'hung' is still connecting"


async def test_closing_stops_every_server_even_one_still_starting(
    connections: Connections,
) -> None:
    good = await connections.ready(stdio("good", "good_server.py"))
    hung = connections.open(stdio("hung", "hang_server.py", timeout=60))
    await until(lambda: len(marked_processes(connections.marker)) == 2)
    started = time.monotonic()
    await hung.close()
    await good.close()
    assert time.monotonic() - started < HANG_SECONDS  # not the hung one's 60 s
    assert marked_processes(connections.marker) == []
    closed = await good.call_tool("echo", {"text": "x"})
    assert closed.is_error


async def test_stdio_servers_start_a_few_at_a_time(
    connections: Connections, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thirty starting servers outnumbered the screen's thread on the run queue; each waits
    for a turn, and takes it once the one before has listed its tools."""
    monkeypatch.setattr(start_slots, "SLOTS", 1)
    monkeypatch.setattr(start_slots, "HOLD_SECONDS", HANG_SECONDS)
    servers = [connections.open(stdio(f"good{i}", "good_server.py")) for i in range(3)]
    most_starting = 0
    while not all(s.status is ServerStatus.CONNECTED for s in servers):
        starting = [
            s for s in servers if s._process is not None and s.status is not ServerStatus.CONNECTED
        ]
        most_starting = max(most_starting, len(starting))
        assert all(s.status is not ServerStatus.FAILED for s in servers), [s.error for s in servers]
        await asyncio.sleep(0.005)
    assert most_starting == 1
    assert len(marked_processes(connections.marker)) == 3


async def test_a_server_hanging_at_start_holds_the_next_back_only_briefly(
    connections: Connections, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(start_slots, "SLOTS", 1)
    monkeypatch.setattr(start_slots, "HOLD_SECONDS", 0.5)
    hung = connections.open(stdio("hung", "hang_server.py", timeout=60))
    await until(lambda: hung._process is not None)
    good = await asyncio.wait_for(connections.ready(stdio("good", "good_server.py")), 20)
    assert good.status is ServerStatus.CONNECTED
    assert hung.status is ServerStatus.CONNECTING  # still within its own 60 s


async def test_a_server_waiting_for_its_turn_says_so(
    connections: Connections, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With many servers a person sees why one is slow to start, and that it has not failed."""
    monkeypatch.setattr(start_slots, "SLOTS", 1)
    monkeypatch.setattr(start_slots, "HOLD_SECONDS", HANG_SECONDS)
    hung = connections.open(stdio("hung", "hang_server.py", timeout=60))
    await until(lambda: hung._process is not None)
    good = connections.open(stdio("good", "good_server.py"))
    await until(lambda: good.detail is not None)
    assert (good.status, good.detail) == (ServerStatus.CONNECTING, WAITING_FOR_TURN)
    assert hung.detail is None
    await hung.close()
    await until(lambda: good.status is ServerStatus.CONNECTED)
    assert good.detail is None


# in process


async def test_an_in_process_server_is_listed_without_a_subprocess(
    connections: Connections,
) -> None:
    server = lowlevel_server("notes", [tool("add_note", "Add a note.", text="The note.")])
    before = set(descendant_pids())
    notes = await connections.ready(InProcessServer("notes", lambda: server))
    assert set(descendant_pids()) <= before
    assert notes.status is ServerStatus.CONNECTED
    assert [t.name for t in notes.tools] == ["add_note"]
    result = await notes.call_tool("add_note", {"text": "milk"})
    assert text_of(result) == 'notes/add_note {"text": "milk"}'


async def test_an_mcpserver_instance_runs_in_process_too(connections: Connections) -> None:
    server = MCPServer("calc")

    @server.tool(description="Multiply two numbers.")
    def multiply(a: float, b: float) -> float:
        return a * b

    calc = await connections.ready(InProcessServer("calc", lambda: server))
    assert [t.name for t in calc.tools] == ["multiply"]
    assert text_of(await calc.call_tool("multiply", {"a": 6, "b": 7})) == "42.0"


async def test_a_tool_list_change_announced_by_the_server_updates_the_tools(
    connections: Connections,
) -> None:
    tools = [tool("announce")]
    server = lowlevel_server("live", tools)
    live = await connections.ready(InProcessServer("live", lambda: server))
    assert [t.name for t in live.tools] == ["announce"]
    tools.append(tool("fresh_tool"))
    await live.call_tool("announce", {})
    await until(lambda: [t.name for t in live.tools] == ["announce", "fresh_tool"])
    assert live.status is ServerStatus.CONNECTED


async def test_an_in_process_server_that_cannot_be_created_fails_with_the_reason(
    connections: Connections,
) -> None:
    def broken() -> Any:
        raise ValueError("BASSI_WEB_BACKEND must be one of: ddgs, none")

    web = await connections.ready(InProcessServer("web", broken))
    assert web.status is ServerStatus.FAILED
    assert web.error == "could not be created: BASSI_WEB_BACKEND must be one of: ddgs, none"


# HTTP


def http_app_server() -> MCPServer:
    server = MCPServer("remote")

    @server.tool(description="Tell the time in a city.")
    def city_time(city: str) -> str:
        return f"noon in {city}"

    return server


async def test_a_streamable_http_server_is_discovered_and_called(
    connections: Connections,
) -> None:
    async with serving(http_app_server().streamable_http_app()) as base:
        remote = await connections.ready(HttpServerConfig(name="remote", url=f"{base}/mcp"))
        assert remote.status is ServerStatus.CONNECTED, remote.error
        assert [t.name for t in remote.tools] == ["city_time"]
        result = await remote.call_tool("city_time", {"city": "Oslo"})
        assert text_of(result) == "noon in Oslo"
        await remote.close()


async def test_an_http_server_that_went_away_is_marked_failed_at_the_next_call(
    connections: Connections,
) -> None:
    async with serving(http_app_server().streamable_http_app()) as base:
        remote = await connections.ready(HttpServerConfig(name="remote", url=f"{base}/mcp"))
        assert remote.status is ServerStatus.CONNECTED, remote.error
    result = await remote.call_tool("city_time", {"city": "Oslo"}, timeout=10)
    assert result.is_error
    reason = f"cannot reach {base}/mcp"
    assert f"server 'remote' stopped during the call: {reason}" in text_of(result)
    assert remote.status is ServerStatus.FAILED
    assert remote.error is not None
    assert remote.error.startswith(reason)


async def test_an_sse_server_is_discovered_and_called(connections: Connections) -> None:
    async with serving(http_app_server().sse_app()) as base:
        spec = HttpServerConfig(name="legacy", url=f"{base}/sse", type="sse")
        legacy = await connections.ready(spec)
        assert legacy.status is ServerStatus.CONNECTED, legacy.error
        result = await legacy.call_tool("city_time", {"city": "Lima"})
        assert text_of(result) == "noon in Lima"
        await legacy.close()


async def test_an_http_error_status_is_the_failure_reason(connections: Connections) -> None:
    keys: list[str | None] = []

    async def refuse(request: Request) -> PlainTextResponse:
        keys.append(request.headers.get("x-key"))
        return PlainTextResponse("token required", status_code=401)

    app = Starlette(routes=[Route("/mcp", refuse, methods=["GET", "POST", "DELETE"])])
    async with serving(app) as base:
        spec = HttpServerConfig(name="locked", url=f"{base}/mcp", headers={"X-Key": "wrong"})
        locked = await connections.ready(spec)
        assert locked.status is ServerStatus.FAILED
        assert locked.error == f"HTTP 401 Unauthorized from {base}/mcp"
        assert keys[0] == "wrong"  # the configured headers are sent


async def test_an_unreachable_http_server_says_so(connections: Connections) -> None:
    async with serving(Starlette()) as base:
        pass  # the port is free again once the server stopped
    gone = await connections.ready(HttpServerConfig(name="gone", url=f"{base}/mcp", timeout=5))
    assert gone.status is ServerStatus.FAILED
    assert gone.error is not None
    assert gone.error.startswith(f"cannot reach {base}/mcp")
