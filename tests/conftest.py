"""Shared fixtures: the scripted model, an isolated environment for the real CLI, and a check
that no test leaves a process behind.

Typical end-to-end test::

    async def test_reply(scripted_model, agent_settings):
        scripted_model.script(text("Hello there"))
        session = AgentSession(agent_settings)
        try:
            events = [e async for e in session.send("hi")]
        finally:
            await session.close()
        assert scripted_model.turn_requests[0].last_user_text().endswith("hi")
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from bassi.core.mcp_config import load_mcp_config
from bassi.core.permissions import PermissionRules
from bassi.core.settings import Settings
from bassi.core.trust import ProjectTrust
from tests.scripted_model import AUX_MODEL, ScriptedModel

TEST_MODEL = "claude-sonnet-4-5"
"""The model the tests configure; the scripted model answers as whatever it is asked to be."""

DUMMY_API_KEY = "sk-ant-test-dummy-key"

# The developer's own credentials and endpoints must never reach a test (no test may touch the
# internet or need a key); ``Settings.from_env`` and the CLI read them from os.environ.
_REAL_CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)
for _name in _REAL_CREDENTIAL_VARIABLES:
    os.environ.pop(_name, None)

# A suite started as a background job of a non-interactive shell (``./run-tests.sh &``) has
# SIGINT ignored, and every program it starts would inherit that: bassi would then, rightly,
# ignore the Ctrl+C the terminal tests send it. The programs the tests start get what a
# terminal gives a program in the foreground (exec resets a handled signal to its default).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def python_output(code: str, *args: str) -> str:
    """What a fresh interpreter running ``code`` with ``args`` prints: for what only holds in
    a process of its own, such as which modules an import loads."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


@pytest.fixture(autouse=True)
def user_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user bassi directories (grants, trust, tokens; the search index
    and catalog cache): a test must never read or write the developer's ``~/.config/bassi``
    or ``~/.cache/bassi``. ``Settings`` built without an explicit ``env`` and
    ``make_agent_env`` both copy ``os.environ``, so both see them."""
    path = tmp_path / "user-config" / "bassi"
    monkeypatch.setenv("BASSI_CONFIG_DIR", str(path))
    monkeypatch.setenv("BASSI_CACHE_DIR", str(tmp_path / "user-cache" / "bassi"))
    return path


def approve_project(settings: Settings, *, rules: bool = False) -> None:
    """Approve the project's servers file as it is now (``bassi mcp approve --all`` does the
    same), and with ``rules`` its ``.claude/settings*.json`` allow rules too. Tests that are
    not about trust start from an approved project, as a user would after the first start."""
    trust = ProjectTrust.load(settings)
    config = load_mcp_config(
        settings.mcp_config_path, settings.env, project_dir=settings.project_dir
    )
    for name, server in config.servers.items():
        trust.approve_server(name, server)
    if rules:
        for source in PermissionRules.load(settings).sources:
            if source.from_project and source.allow:
                trust.approve_rules(source.name, source.allow_patterns)


HANG_SECONDS = 30.0
"""The only wall-clock bound a test may assert: far above what any step takes on a busy shared
machine, far below what the behaviour under test would take if it failed (a timeout that never
fires, a stream that is never cut). Speed itself is measured by the scripts in ``bench/``."""


SLOW_MODULES = frozenset(
    {
        "tests.test_access_table",
        "tests.test_catalog",
        "tests.test_discovery",
        "tests.test_mcp_servers",
        "tests.test_mcp_servers_bash",
        "tests.test_mcp_servers_python",
        "tests.test_mcp_servers_web",
        "tests.test_progressive_e2e",
        "tests.test_search_semantic",
        "tests.test_session_e2e",
        "tests.test_supervisor",
        "tests.test_terminal",
        "tests.test_tools_cli",
        "tests.test_validation_e2e",
        "tests.ui.test_app",
        "tests.ui.test_chat_e2e",
        "tests.ui.test_snapshots",
        "tests.ui.test_trust_e2e",
        "tests.ui.test_validation_display",
    }
)
"""Modules whose tests start the real CLI, a terminal, subprocess servers or the sentence
encoder: marked ``slow`` (a single such test elsewhere carries ``@pytest.mark.slow``).
``./run-tests.sh --fast`` leaves them out; the default runs all."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="run the core tests only, leaving out those marked slow (real CLI, terminal, "
        "subprocess servers, encoder)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    if config.getoption("--fast"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


# ---------------------------------------------------------------------------------------------
# The scripted model and the agent's environment


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A running scripted model; fails the test if a turn found the script exhausted."""
    model = ScriptedModel()
    try:
        yield model
    finally:
        model.close()
    if model.failures:
        pytest.fail("scripted model: " + "; ".join(model.failures), pytrace=False)


def make_agent_env(
    home: Path, base_url: str | None, *, api_key: str | None = DUMMY_API_KEY, **extra: str
) -> dict[str, str]:
    """The complete environment for the CLI (use as ``Settings.env``).

    ``HOME`` and ``CLAUDE_CONFIG_DIR`` point into ``home`` so the real user's Claude config,
    login and transcripts are never read or written. ``CLAUDE_CODE_MAX_RETRIES=0``: a scripted
    fault is answered once and reported at once instead of after minutes of backoff (override
    it through ``extra`` to test retries). ``api_key=None`` gives an env with no credentials.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _REAL_CREDENTIAL_VARIABLES}
    env |= {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ANTHROPIC_SMALL_FAST_MODEL": AUX_MODEL,
    }
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    if api_key is not None:
        env["ANTHROPIC_API_KEY"] = api_key
    return env | extra


@pytest.fixture
def agent_env(scripted_model: ScriptedModel, tmp_path: Path) -> dict[str, str]:
    """The CLI's environment, pointed at ``scripted_model`` with a dummy key."""
    return make_agent_env(tmp_path / "home", scripted_model.base_url)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty project directory (the CLI's cwd; bassi keeps ``.bassi/`` state here)."""
    path = tmp_path / "project"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def agent_settings(agent_env: Mapping[str, str], project_dir: Path) -> Settings:
    """Settings for an ``AgentSession`` that talks to ``scripted_model``."""
    return Settings(project_dir=project_dir, model=TEST_MODEL, env=dict(agent_env))


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """For tests that route logging to a file: the root logger as it was, afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


# ---------------------------------------------------------------------------------------------
# No leftover processes

LINGER_GRACE_SECONDS = 5.0
"""How long a process may take to exit after its test ended before it counts as leaked."""


def descendant_pids(root: int | None = None) -> dict[int, str]:
    """Live (non-zombie) descendants of ``root`` (default: this process), pid -> command line."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: fields start after the last ")".
        fields = stat[stat.rindex(")") + 2 :].split()
        states[int(entry.name)] = fields[0]
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    stack = list(children.get(os.getpid() if root is None else root, []))
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        if states.get(pid) == "Z":
            continue
        try:
            cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes()
        except OSError:
            continue
        found[pid] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    return found


def _wait_for_exit(pids: Mapping[int, str], grace: float) -> dict[int, str]:
    deadline = time.monotonic() + grace
    left = dict(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = descendant_pids()
        left = {pid: cmd for pid, cmd in left.items() if pid in alive}
    return left


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Fail a test that leaves a child process (CLI, MCP server, ...) running after it."""
    before = set(descendant_pids())
    yield
    new = {pid: cmd for pid, cmd in descendant_pids().items() if pid not in before}
    leaked = _wait_for_exit(new, LINGER_GRACE_SECONDS)
    if leaked:
        for pid in leaked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        listing = "\n".join(f"  {pid}: {cmd}" for pid, cmd in leaked.items())
        pytest.fail(f"processes left running after the test (now killed):\n{listing}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Processes started by session/module fixtures must be gone when the run ends too."""
    leaked = _wait_for_exit(descendant_pids(), LINGER_GRACE_SECONDS)
    if leaked:
        listing = "\n".join(f"  {pid}: {cmd}" for pid, cmd in leaked.items())
        print(f"\nprocesses left running after the test session:\n{listing}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Last: the OAuth fixtures import helpers that import this module.
from tests.oauth_fixtures import secure  # noqa: E402

__all__ = ["secure"]
"""Fixtures defined elsewhere, offered to every test: ``secure`` is an OAuth-protected MCP
server with its authorization server on 127.0.0.1."""
