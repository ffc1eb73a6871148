"""The shipped ``task_automation`` server (``execute_python``), over stdio and in process."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client

from mcp_servers._process import SUPERVISED
from tests.conftest import HANG_SECONDS
from tests.discovery_fixtures import MARKER_VARIABLE, marked_processes
from tests.mcp_servers_support import (
    TRANSPORTS,
    call,
    connect,
    escape_marker,
    held_open,
    until_group_gone,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ENV = {
    "BASSI_PYTHON_TIMEOUT": "30",
    "BASSI_PYTHON_MAX_TIMEOUT": "60",
    "BASSI_OUTPUT_LIMIT": "2000",
    "PROJECT_SETTING": "kept",
    "ANTHROPIC_API_KEY": "sk-ant-api-3f9c1e",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("project").resolve()


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=TRANSPORTS)
async def client(request: pytest.FixtureRequest, project: Path) -> AsyncIterator[Client]:
    async with held_open(lambda: connect("task_automation", request.param, project, ENV)) as c:
        yield c


async def run(client: Client, code: str, **extra: object) -> tuple[bool, str]:
    return await call(client, "execute_python", {"code": code, **extra})


async def test_batch_renames_files_in_the_project(client: Client, project: Path) -> None:
    batch = project / "batch"
    batch.mkdir(exist_ok=True)
    for name in ("a.txt", "b.txt", "keep.csv"):
        (batch / name).write_text(name)
    code = (
        "from pathlib import Path\n"
        "for path in sorted(Path('batch').glob('*.txt')):\n"
        "    path.rename(path.with_suffix('.md'))\n"
        "    print('renamed', path.name)\n"
    )
    is_error, text = await run(client, code)
    assert not is_error
    assert text.startswith("Exit code 0")
    assert "--- stdout ---\nrenamed a.txt\nrenamed b.txt\n--- stderr ---\n(empty)" in text
    assert sorted(p.name for p in batch.iterdir()) == ["a.md", "b.md", "keep.csv"]


async def test_runs_in_an_isolated_interpreter_in_the_project(
    client: Client, project: Path
) -> None:
    code = "import os, sys\nprint(os.getcwd())\nprint(sys.flags.isolated, sys.flags.no_user_site)"
    is_error, text = await run(client, code)
    assert not is_error
    assert f"--- stdout ---\n{project}\n1 1\n" in text


async def test_an_exception_is_an_error_result_with_the_traceback(client: Client) -> None:
    is_error, text = await run(client, "print('before')\n1 / 0\n")
    assert is_error
    assert text.startswith("Exit code 1")
    assert "before" in text
    assert 'task.py", line 2, in <module>' in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")


async def test_the_exit_status_is_reported(client: Client) -> None:
    is_error, text = await run(client, "import sys\nsys.exit(3)")
    assert is_error
    assert text.startswith("Exit code 3")


async def test_input_gets_end_of_file_at_once(client: Client) -> None:
    is_error, text = await run(client, "input('name? ')", timeout=10)
    assert is_error
    assert "EOFError: EOF when reading a line" in text


async def test_timeout_kills_the_program_and_what_it_started(client: Client, project: Path) -> None:
    marker = project / "python.pgid"
    code = (
        "import os, subprocess, time\n"
        f"open({str(marker)!r}, 'w').write(str(os.getpgid(0)))\n"
        "subprocess.Popen(['sleep', '60'])\n"
        "print('waiting', flush=True)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    is_error, text = await run(client, code, timeout=1.5)
    assert time.monotonic() - started < HANG_SECONDS
    assert is_error
    assert text.startswith("Timed out after 1.5 s")
    assert "--- stdout ---\nwaiting\n" in text
    await until_group_gone(int(marker.read_text()))


async def test_output_is_capped_keeping_head_and_tail(client: Client) -> None:
    is_error, text = await run(client, "for n in range(100_000):\n    print(n)")
    assert not is_error
    stdout = text.split("--- stdout ---\n", 1)[1].split("\n--- stderr ---", 1)[0]
    assert stdout.startswith("0\n1\n2\n")
    assert stdout.endswith("99998\n99999")
    assert "bytes cut;" in stdout
    assert len(stdout) < 2000 + 100


async def test_a_long_program_runs(client: Client) -> None:
    """Longer than one command-line argument may be (128 KiB on Linux)."""
    code = "total = 0\n" + "total += 1\n" * 20_000 + "print(total)\n"
    assert len(code) > 200_000
    is_error, text = await run(client, code)
    assert not is_error
    assert "--- stdout ---\n20000\n" in text


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({}, "Invalid arguments for execute_python: code: Field required"),
        ({"code": "pass", "timeout": -1}, "timeout: Input should be greater than 0"),
        ({"code": "pass", "timeout": 61}, "timeout 61 s is above the maximum of 60 s"),
        ({"code": "pass", "cwd": "x"}, "cwd: Extra inputs are not permitted"),
    ],
)
async def test_invalid_arguments_are_error_results(
    client: Client, arguments: dict[str, object], complaint: str
) -> None:
    is_error, text = await call(client, "execute_python", arguments)
    assert is_error
    assert complaint in text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_defaults_apply_without_environment(transport: str, tmp_path: Path) -> None:
    async with connect("task_automation", transport, tmp_path) as client:
        tools = (await client.list_tools()).tools
    description = tools[0].description or ""
    assert "Timeout: 120 s unless you pass `timeout` (at most 600 s)" in description
    assert "first and last 15000 bytes" in description


def daemonizing(marker: str) -> str:
    """A program that starts a daemon the classic way (fork, setsid, fork again: re-parented
    away, in a session of its own) carrying ``marker`` in its environment, and waits until
    the daemon runs."""
    return (
        "import os, time\n"
        f"os.environ[{MARKER_VARIABLE!r}] = {marker!r}\n"
        f"ready = {marker + '.ready'!r}\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        open(ready, 'w').close()\n"
        "        os.execvp('sleep', ['sleep', '60'])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "while not os.path.exists(ready):\n"
        "    time.sleep(0.05)\n"
        "print('daemon running', flush=True)\n"
    )


linux_only = pytest.mark.skipif(
    not SUPERVISED, reason="only Linux can reach processes that left the group"
)


@linux_only
async def test_a_daemon_does_not_outlive_the_program(client: Client) -> None:
    with escape_marker() as marker:
        is_error, text = await run(client, daemonizing(marker))
        assert not is_error, text
        assert "--- stdout ---\ndaemon running\n" in text
        assert marked_processes(marker) == []


@linux_only
async def test_a_daemon_does_not_outlive_a_timeout(client: Client) -> None:
    with escape_marker() as marker:
        is_error, text = await run(client, daemonizing(marker) + "time.sleep(60)\n", timeout=5)
        assert is_error
        assert text.startswith("Timed out after 5 s")
        assert "--- stdout ---\ndaemon running\n" in text
        assert marked_processes(marker) == []


async def test_programs_do_not_see_the_agents_credentials(client: Client) -> None:
    code = (
        "import os\nprint(sorted(k for k in os.environ if k.startswith(('ANTHROPIC', 'PROJECT'))))"
    )
    is_error, text = await run(client, code)
    assert not is_error
    assert "--- stdout ---\n['PROJECT_SETTING']\n" in text
