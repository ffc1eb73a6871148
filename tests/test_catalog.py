"""The catalog facade: every server registered at once, connected concurrently, the registry
and the search index kept in step, calls routed over the open sessions."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bassi.core.catalog import Catalog
from bassi.core.mcp_config import StdioServerConfig
from bassi.core.registry import ServerStatus
from bassi.core.search import ToolIndex
from bassi.core.settings import Settings
from bassi.core.tools import Origin, ToolInfo
from mcp_servers import SHIPPED_SERVERS, ShippedServer
from tests.conftest import HANG_SECONDS, descendant_pids, python_output
from tests.discovery_fixtures import (
    MARKER_VARIABLE,
    lowlevel_server,
    marked_processes,
    new_marker,
    project_settings,
    stdio_entry,
    text_of,
    tool,
    until,
)

NOTES = [
    tool("add_note", "Add a note to the notebook.", text="The note."),
    tool("list_notes", "List every note in the notebook."),
]


def shipped_notes(project: Path) -> Any:
    return lowlevel_server("notes", list(NOTES))


class Started:
    """A started catalog and the marker of its server processes."""

    def __init__(self, catalog: Catalog, marker: str) -> None:
        self.catalog = catalog
        self.marker = marker


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Any]:
    """``await start(servers, shipped=...)`` -> a started catalog over a fresh project; every
    catalog is closed at the end and must leave no process behind."""
    started: list[Started] = []

    async def make(servers: Mapping[str, Any], shipped: Mapping[str, Any] | None = None) -> Started:
        marker = new_marker()
        marked = {
            name: {**entry, "env": {**entry.get("env", {}), MARKER_VARIABLE: marker}}
            if "command" in entry
            else entry
            for name, entry in servers.items()
        }
        settings = project_settings(tmp_path, marked)
        catalog = Catalog(settings, shipped=shipped or {"notes": shipped_notes})
        result = Started(catalog, marker)
        started.append(result)
        await catalog.start()
        return result

    yield make
    for each in started:
        await each.catalog.close()
        assert marked_processes(each.marker) == []


async def test_start_registers_every_server_at_once_and_connects_in_the_background(
    start: Any,
) -> None:
    run = await start(
        {
            "good": stdio_entry("good_server.py"),
            "off": stdio_entry("good_server.py", disabled=True, alwaysLoad=True),
        }
    )
    registry = run.catalog.registry
    # Returned before any external server connected: start does not wait for them.
    assert [(e.name, e.origin, e.status) for e in registry.servers()] == [
        ("notes", Origin.IN_PROCESS, ServerStatus.CONNECTING),
        ("good", Origin.EXTERNAL, ServerStatus.CONNECTING),
        ("off", Origin.EXTERNAL, ServerStatus.DISABLED),
    ]
    assert await run.catalog.wait_ready()
    assert [(e.name, e.status) for e in registry.servers()] == [
        ("notes", ServerStatus.CONNECTED),
        ("good", ServerStatus.CONNECTED),
        ("off", ServerStatus.DISABLED),
    ]
    assert registry.server("off").always_load
    good = registry.server("good")
    assert not good.always_load
    assert good.target.endswith("good_server.py")
    assert [t.qualified_name for t in good.tools][:2] == ["mcp__good__echo", "mcp__good__add"]
    assert all(t.origin is Origin.EXTERNAL for t in good.tools)
    assert all(t.origin is Origin.IN_PROCESS for t in registry.server("notes").tools)


async def test_a_hanging_server_does_not_delay_the_others(start: Any) -> None:
    hang_timeout = 20.0
    began = time.monotonic()
    run = await start(
        {
            "hung": stdio_entry("hang_server.py", timeout=hang_timeout),
            "good": stdio_entry("good_server.py"),
            "paged": stdio_entry("paged_server.py"),
        }
    )
    registry = run.catalog.registry

    def others_connected() -> bool:
        connected = all(registry.server(n).available for n in ("notes", "good", "paged"))
        return connected and not run.catalog.index.indexing

    await until(others_connected, seconds=hang_timeout)
    # Connected while the hanging one still is: they did not wait for it.
    assert registry.server("hung").status is ServerStatus.CONNECTING
    # The others are searchable while the hanging server is still starting.
    assert run.catalog.index.search("beta_two")[0].tool.ref == "paged/beta_two"
    assert not await run.catalog.wait_ready(timeout=0.2)

    assert await run.catalog.wait_ready()
    hung = registry.server("hung")
    assert hung.status is ServerStatus.FAILED
    assert hung.error is not None
    assert hung.error.startswith("timed out after 20 s")
    assert time.monotonic() - began >= hang_timeout


async def test_failures_are_recorded_with_their_reasons(start: Any) -> None:
    run = await start(
        {
            "gone": stdio_entry("exit_server.py"),
            "typo": {"command": "definitely-not-installed-mcp"},
            "good": stdio_entry("good_server.py"),
        }
    )
    await run.catalog.wait_ready()
    registry = run.catalog.registry
    gone = registry.server("gone")
    assert gone.status is ServerStatus.FAILED
    assert gone.error is not None
    assert "exited with code 3" in gone.error
    assert "GITHUB_TOKEN is not set" in gone.error
    assert registry.server("typo").error == "command not found: definitely-not-installed-mcp"
    assert registry.server("good").available


async def test_the_index_follows_the_registry(start: Any) -> None:
    run = await start({"good": stdio_entry("good_server.py")})
    await run.catalog.wait_ready()
    index = run.catalog.index
    assert index.search("good/echo")[0].tool.ref == "good/echo"
    assert index.search("add_note")[0].tool.ref == "notes/add_note"
    assert {h.tool.server for h in index.search("note", server="notes")} == {"notes"}
    assert len(index) == len(run.catalog.registry.tools())


async def test_calls_are_routed_to_the_right_server(start: Any) -> None:
    run = await start({"good": stdio_entry("good_server.py")})
    await run.catalog.wait_ready()
    catalog = run.catalog
    assert text_of(await catalog.call_tool("good", "add", {"a": 1, "b": 1})) == "2"
    assert (
        text_of(await catalog.call_tool("notes", "add_note", {"text": "x"}))
        == 'notes/add_note {"text": "x"}'
    )
    failed = await catalog.call_tool("good", "fail", {})
    assert failed.is_error
    unknown = await catalog.call_tool("nowhere", "x", {})
    assert unknown.is_error
    assert text_of(unknown) == "unknown server 'nowhere'"


async def test_a_disabled_server_is_listed_but_not_started(start: Any) -> None:
    run = await start({"off": stdio_entry("good_server.py", disabled=True)})
    await run.catalog.wait_ready()
    assert marked_processes(run.marker) == []
    result = await run.catalog.call_tool("off", "echo", {"text": "x"})
    assert result.is_error
    assert text_of(result) == "server 'off' is disabled"
    await run.catalog.reconnect("off")
    await run.catalog.wait_ready()
    assert run.catalog.registry.server("off").available


async def test_a_crash_mid_call_keeps_the_tools_listed_as_unavailable_until_reconnected(
    start: Any,
) -> None:
    run = await start({"crashy": stdio_entry("crash_server.py")})
    await run.catalog.wait_ready()
    catalog, registry = run.catalog, run.catalog.registry
    result = await catalog.call_tool("crashy", "crash", {})
    assert result.is_error
    assert "exited with code 7" in text_of(result)
    entry = registry.server("crashy")
    assert entry.status is ServerStatus.FAILED
    assert entry.error is not None
    assert entry.error.startswith("exited with code 7")
    assert [t.name for t in entry.tools] == ["echo", "crash"]
    echo = registry.resolve("crashy/echo")
    assert not registry.is_available(echo)
    assert catalog.index.search("crashy/echo")[0].tool.ref == "crashy/echo"

    await catalog.reconnect("crashy")
    assert registry.server("crashy").status is ServerStatus.CONNECTING
    assert [t.name for t in registry.server("crashy").tools] == ["echo", "crash"]
    await catalog.wait_ready()
    assert registry.is_available(echo)
    assert text_of(await catalog.call_tool("crashy", "echo", {"text": "again"})) == "again"


async def test_config_problems_are_reported_and_valid_servers_still_load(start: Any) -> None:
    run = await start(
        {
            "good": stdio_entry("good_server.py"),
            "bad name": {"command": "x"},
            "notes": {"command": "x"},
            "bassi": {"command": "x"},
            "remote": {"url": "https://example.invalid/mcp"},
        }
    )
    await run.catalog.wait_ready()
    catalog = run.catalog
    assert {p.server: p.message for p in catalog.problems}.keys() == {
        "bad name",
        "notes",
        "bassi",
        "remote",
    }
    collision = next(p for p in catalog.problems if p.server == "notes")
    assert "belongs to a server bassi ships" in collision.message
    meta = next(p for p in catalog.problems if p.server == "bassi")
    assert "is bassi's own (its tool_search" in meta.message
    assert [e.name for e in catalog.registry.servers()] == ["notes", "good"]
    assert catalog.registry.server("notes").origin is Origin.IN_PROCESS
    good = catalog.config_for("good")
    assert isinstance(good, StdioServerConfig)
    assert good.args[0].endswith("good_server.py")
    assert catalog.config_for("notes") is None


async def test_bassis_own_servers_run_in_process(start: Any) -> None:
    before = set(descendant_pids())
    run = await start({})
    assert await run.catalog.wait_ready()
    assert run.catalog.registry.server("notes").available
    assert set(descendant_pids()) <= before


async def test_the_shipped_servers_are_the_default(tmp_path: Path) -> None:
    from mcp_servers import SHIPPED_SERVERS

    catalog = Catalog(project_settings(tmp_path, {}), index=ToolIndex())
    await catalog.start()
    try:
        await catalog.wait_ready()
        entries = catalog.registry.servers()
        assert [e.name for e in entries] == list(SHIPPED_SERVERS)
        assert all(e.origin is Origin.IN_PROCESS and e.available for e in entries), entries
        assert all(e.tools for e in entries)
    finally:
        await catalog.close()


OWN_SERVERS_ALONE = """
import asyncio, json, sys
from pathlib import Path
from bassi.core.catalog import Catalog
from bassi.core.settings import Settings

async def main():
    project = Path(sys.argv[1])
    catalog = Catalog(Settings(project_dir=project, env={"HOME": str(project)}))
    await catalog.start()
    await catalog.wait_ready()
    entries = {
        e.name: [e.status.value, [t.name for t in e.tools]] for e in catalog.registry.servers()
    }
    client_loaded = any(m == "mcp" or m.startswith(("mcp.", "mcp_types")) for m in sys.modules)
    await catalog.close()
    print(json.dumps({"servers": entries, "mcp": client_loaded}))

asyncio.run(main())
"""


def test_bassis_own_servers_connect_without_loading_the_mcp_client(tmp_path: Path) -> None:
    """They are Python code in bassi's process: listed as soon as their modules load, not
    after the MCP library (about a second), which is what puts them on the first screen."""
    report = json.loads(python_output(OWN_SERVERS_ALONE, str(tmp_path)))
    assert report["servers"] == {
        "bash": ["connected", ["execute"]],
        "web": ["connected", ["search", "fetch"]],
        "task_automation": ["connected", ["execute_python"]],
    }
    assert report["mcp"] is False


async def test_own_servers_list_what_they_list_over_mcp(tmp_path: Path) -> None:
    """Called directly or served over MCP (stdio for other clients), a shipped server offers
    the same tools, word for word."""
    catalog = Catalog(project_settings(tmp_path, {}), index=ToolIndex())
    await catalog.start()
    try:
        await catalog.wait_ready()
        for name, server in SHIPPED_SERVERS.items():
            async with Client(server(tmp_path), mode="legacy") as client:
                listed = (await client.list_tools()).tools
            over_mcp = [
                ToolInfo.from_mcp(
                    name,
                    t.model_dump(mode="json", by_alias=True, exclude_none=True),
                    Origin.IN_PROCESS,
                )
                for t in listed
            ]
            assert list(catalog.registry.server(name).tools) == over_mcp
    finally:
        await catalog.close()


async def test_own_tools_are_called_directly_with_deadline_and_cancel(tmp_path: Path) -> None:
    catalog = Catalog(project_settings(tmp_path, {}), index=ToolIndex())
    await catalog.start()
    try:
        await catalog.wait_ready()
        ran = await catalog.call_tool("bash", "execute", {"command": "echo hello"})
        assert not ran.is_error
        assert "hello" in text_of(ran)
        failed = await catalog.call_tool("bash", "execute", {"command": "exit 3"})
        assert failed.is_error and "Exit code 3" in text_of(failed)
        wrong = await catalog.call_tool("bash", "execute", {"comand": "ls"})
        assert wrong.is_error and "Invalid arguments for execute" in text_of(wrong)
        unknown = await catalog.call_tool("bash", "nope", {})
        assert unknown.is_error and "Unknown tool 'nope'" in text_of(unknown)

        before = set(descendant_pids())
        late = await catalog.call_tool("bash", "execute", {"command": "sleep 60"}, timeout=0.5)
        assert late.is_error
        assert text_of(late) == "tool 'execute' on server 'bash' did not answer within 0.5 s"
        await until(lambda: set(descendant_pids()) <= before)

        call = asyncio.ensure_future(catalog.call_tool("bash", "execute", {"command": "sleep 60"}))
        await until(lambda: bool(set(descendant_pids()) - before))
        assert catalog.cancel_calls() == 1
        cancelled = await asyncio.wait_for(call, HANG_SECONDS)
        assert text_of(cancelled) == "the user cancelled the call to 'execute' on server 'bash'"
        await until(lambda: set(descendant_pids()) <= before)
    finally:
        await catalog.close()


async def test_an_own_server_that_cannot_be_defined_is_failed_with_the_reason(
    tmp_path: Path,
) -> None:
    shipped = {"bash": SHIPPED_SERVERS["bash"], "broken": ShippedServer("no_such_server")}
    catalog = Catalog(project_settings(tmp_path, {}), shipped=shipped, index=ToolIndex())
    await catalog.start()
    try:
        await catalog.wait_ready()
        entry = catalog.registry.server("broken")
        assert entry.status is ServerStatus.FAILED
        assert entry.error == (
            "could not be created: ModuleNotFoundError: "
            "No module named 'mcp_servers.no_such_server'"
        )
        refused = await catalog.call_tool("broken", "execute", {"command": "true"})
        assert refused.is_error and "not available" in text_of(refused)
        assert catalog.registry.server("bash").available
    finally:
        await catalog.close()


async def test_close_leaves_no_process_even_while_servers_are_starting(start: Any) -> None:
    run = await start(
        {
            "hung": stdio_entry("hang_server.py", timeout=60),
            "good": stdio_entry("good_server.py"),
        }
    )
    await until(lambda: len(marked_processes(run.marker)) == 2)
    began = time.monotonic()
    await run.catalog.close()
    assert time.monotonic() - began < HANG_SECONDS  # not the hung one's 60 s
    assert marked_processes(run.marker) == []


def test_a_servers_file_named_on_the_command_line_must_exist(tmp_path: Path) -> None:
    settings = Settings(
        project_dir=tmp_path, mcp_config=tmp_path / "nope.json", env=dict(os.environ)
    )
    catalog = Catalog(settings, shipped={}, index=ToolIndex())
    assert [str(p) for p in catalog.problems] == [f"{tmp_path / 'nope.json'}: file not found"]


async def test_a_failing_registry_listener_does_not_fail_the_server(start: Any) -> None:
    run = await start({"good": stdio_entry("good_server.py")})

    def broken(_server: str) -> None:
        raise RuntimeError("a listener's bug")

    run.catalog.registry.subscribe(broken)
    assert await run.catalog.wait_ready()
    assert run.catalog.registry.server("good").status is ServerStatus.CONNECTED
    assert run.catalog.index.search("good/echo")[0].tool.ref == "good/echo"


async def test_whoosh_holds_one_document_per_tool_once_servers_connect(start: Any) -> None:
    run = await start(
        {"good": stdio_entry("good_server.py"), "paged": stdio_entry("paged_server.py")}
    )
    assert await run.catalog.wait_ready()
    index, registry = run.catalog.index, run.catalog.registry
    assert index.records.count() == len(registry.tools()) == len(index)
    good = {h.tool.ref for h in index.search("server:good", limit=100)}
    assert good == {t.ref for t in registry.server("good").tools}


EXTERNAL_SERVER_ON_THE_LOOP = """
import asyncio, json, os, sys, threading
from pathlib import Path
from bassi.core.catalog import Catalog
from bassi.core.settings import Settings

on_the_loop = []

class Recorder:
    def find_spec(self, name, path=None, target=None):
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(name)
        return None

async def main():
    catalog = Catalog(Settings(project_dir=Path(sys.argv[1]), env=dict(os.environ)))
    sys.meta_path.insert(0, Recorder())
    await catalog.start()
    await catalog.wait_ready()
    status = {e.name: e.status.value for e in catalog.registry.servers()}["good"]
    await catalog.close()
    print(json.dumps({"status": status, "imported": on_the_loop}))

asyncio.run(main())
"""


def test_connecting_an_external_server_imports_no_client_library_on_the_ui_thread(
    tmp_path: Path,
) -> None:
    """The MCP client and its sign-in code load in a thread: imported on the event loop, the
    OAuth models alone froze the screen for 40-60 ms while thirty servers started
    (``bench/loop_lag.py``)."""
    project_settings(tmp_path, {"good": stdio_entry("good_server.py")})
    report = json.loads(python_output(EXTERNAL_SERVER_ON_THE_LOOP, str(tmp_path)))
    assert report["status"] == "connected"
    heavy = [
        name
        for name in report["imported"]
        if name.split(".")[0] in {"mcp", "mcp_types", "httpx", "pydantic", "anyio"}
        or name == "bassi.core.oauth"
    ]
    assert heavy == [], f"imported on the event loop: {heavy}"


def test_a_server_npx_is_still_installing_counts_as_one_a_search_cannot_see_yet(
    tmp_path: Path,
) -> None:
    """A first start through npx downloads for seconds to minutes: "No tools match" then
    must say that more may match soon, as for a server that is connecting."""
    catalog = Catalog(Settings(project_dir=tmp_path, env=dict(os.environ)))
    catalog.registry.add_server("memory", Origin.EXTERNAL, status=ServerStatus.INSTALLING)
    catalog.registry.add_server("notes", Origin.EXTERNAL)
    catalog.registry.add_server("broken", Origin.EXTERNAL, status=ServerStatus.FAILED)
    assert catalog.waiting() == ["memory", "notes"]
