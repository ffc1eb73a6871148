"""bassi as the MCP client real servers expect, against real stdio servers from
``tests/servers``: prompts, resources, elicitation, progress, structured content, cancelling,
list changes, a bad tool schema, a server that fails its first start, npx-style installs, and
a server that speaks only the 2026-07-28 revision."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types

from bassi.core.catalog import CallProgress, Catalog
from bassi.core.connection_thread import ThreadedConnection, _tool_info
from bassi.core.connections import ElicitationRequest, ServerConnection
from bassi.core.mcp_config import StdioServerConfig
from bassi.core.package_runner import is_installed, package_run
from bassi.core.registry import ServerStatus
from bassi.core.tools import ToolInfo
from tests.conftest import HANG_SECONDS
from tests.discovery_fixtures import (
    MARKER_VARIABLE,
    SERVERS,
    marked_processes,
    new_marker,
    project_settings,
    stdio_entry,
    text_of,
    until,
)


@pytest.fixture
async def catalog_of(tmp_path: Path) -> AsyncIterator[Any]:
    """``await catalog_of(servers, env=...)``: a started catalog (no shipped servers) over a
    fresh project; closed at the end, leaving no process."""
    made: list[tuple[Catalog, str]] = []

    async def make(servers: dict[str, Any], env: dict[str, str] | None = None) -> Catalog:
        marker = new_marker()
        marked = {
            name: {**entry, "env": {**entry.get("env", {}), MARKER_VARIABLE: marker}}
            for name, entry in servers.items()
        }
        settings = project_settings(tmp_path, marked, env={**os.environ, **(env or {})})
        catalog = Catalog(settings, shipped={})
        made.append((catalog, marker))
        await catalog.start()
        await catalog.wait_ready()
        return catalog

    yield make
    for catalog, marker in made:
        await catalog.close()
        assert marked_processes(marker) == []


def features(*args: str) -> dict[str, Any]:
    return stdio_entry("features_server.py", *args, timeout=30)


async def test_prompts_and_resources_are_listed_and_used(catalog_of: Any) -> None:
    catalog = await catalog_of({"feat": features()})
    entry = catalog.registry.server("feat")
    assert entry.status is ServerStatus.CONNECTED
    prompts = {p.name: p for p in entry.prompts}
    assert set(prompts) == {"greet", "review"}
    assert prompts["greet"].command == "mcp__feat__greet"
    assert [(a.name, a.required) for a in prompts["greet"].arguments] == [
        ("name", True),
        ("style", False),
    ]
    assert [r.uri for r in entry.resources] == ["notes://today"]
    assert [t.uri_template for t in entry.templates] == ["notes://day/{day}"]

    rendered = await catalog.get_prompt("feat", "greet", {"name": "Ann", "style": "short"})
    assert rendered.messages[0].content == types.TextContent(text="Write a short greeting for Ann.")
    contents = await catalog.read_resource("feat", "notes://day/monday")
    assert contents.contents[0].text == "Note of monday: nothing planned."  # type: ignore[union-attr]


@pytest.mark.parametrize("revision", ["2025", "2026-07-28"])
async def test_an_elicitation_reaches_the_handler_and_its_answer_the_server(
    catalog_of: Any, revision: str
) -> None:
    catalog = await catalog_of({"feat": features("--modern") if revision != "2025" else features()})
    asked: list[ElicitationRequest] = []
    answers = iter(
        [
            types.ElicitResult(action="accept", content={"name": "Ann", "nights": 3}),
            types.ElicitResult(action="decline"),
        ]
    )

    async def handler(request: ElicitationRequest) -> types.ElicitResult:
        asked.append(request)
        return next(answers)

    catalog.elicitation_handler = handler
    accepted = await catalog.call_tool("feat", "book_room", {})
    assert text_of(accepted) == "booked 3 night(s) for Ann"
    declined = await catalog.call_tool("feat", "book_room", {})
    assert text_of(declined) == "not booked: the user chose decline"
    request = asked[0]
    assert request.server == "feat"
    assert isinstance(request.params, types.ElicitRequestFormParams)
    assert request.params.message == "Who is travelling, and for how many nights?"
    assert set(request.params.requested_schema["properties"]) == {"name", "nights"}


async def test_without_a_handler_an_elicitation_is_declined(catalog_of: Any) -> None:
    catalog = await catalog_of({"feat": features()})
    result = await catalog.call_tool("feat", "book_room", {})
    assert text_of(result) == "not booked: the user chose decline"


async def test_progress_is_reported_by_call_id_and_the_full_result_is_kept(
    catalog_of: Any,
) -> None:
    catalog = await catalog_of({"feat": features()})
    seen: list[CallProgress] = []
    catalog.calls.subscribe(seen.append)
    result = await catalog.call_tool("feat", "count_slowly", {"n": 3, "pause": 0.05}, call_id="t1")
    assert text_of(result) == "counted to 3"
    assert [(p.call_id, p.progress, p.total, p.message) for p in seen] == [
        ("t1", 1, 3, "counted 1 of 3"),
        ("t1", 2, 3, "counted 2 of 3"),
        ("t1", 3, 3, "counted 3 of 3"),
    ]
    await catalog.call_tool("feat", "readings", {}, call_id="t2")
    kept = catalog.calls.result("t2")
    assert kept is not None
    assert kept.structured_content == {
        "readings": [{"city": "Oslo", "celsius": 4}, {"city": "Rome", "celsius": 19}]
    }


async def test_cancelling_a_call_tells_the_server(catalog_of: Any, tmp_path: Path) -> None:
    record = tmp_path / "record.txt"
    catalog = await catalog_of({"feat": features("--record", str(record))})
    async with anyio.create_task_group() as tasks:
        results: list[types.CallToolResult] = []

        async def call() -> None:
            results.append(await catalog.call_tool("feat", "wait_forever", {}))

        tasks.start_soon(call)
        await until(lambda: record.exists() and "waiting" in record.read_text())
        assert catalog.cancel_calls() == 1
    assert results[0].is_error
    assert text_of(results[0]) == "the user cancelled the call to 'wait_forever' on server 'feat'"
    await until(lambda: "cancelled" in record.read_text())


async def test_abandoning_a_call_cancels_it_on_the_connection_thread(
    catalog_of: Any, tmp_path: Path
) -> None:
    """The call runs on the connections' own loop: giving up the await here (a turn torn
    down, a deadline of the caller's) must reach the server there, not leave it running."""
    record = tmp_path / "record.txt"
    catalog = await catalog_of({"feat": features("--record", str(record))})
    call = asyncio.ensure_future(catalog.call_tool("feat", "wait_forever", {}))
    await until(lambda: record.exists() and "waiting" in record.read_text())
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await until(lambda: "cancelled" in record.read_text())
    assert text_of(await catalog.call_tool("feat", "readings", {})) == "2 readings"


async def test_a_server_connects_while_the_callers_loop_is_busy(tmp_path: Path) -> None:
    """External servers are connected on a thread of their own: a loop that is busy (the
    UI drawing) does not hold them up, and their state reaches it once it is free."""
    marker = new_marker()
    entry = {**features(), "env": {MARKER_VARIABLE: marker}}
    catalog = Catalog(project_settings(tmp_path, {"feat": entry}), shipped={})
    await catalog.start()
    try:
        connection = catalog.connection("feat")
        assert isinstance(connection, ThreadedConnection)
        deadline = time.monotonic() + HANG_SECONDS
        while connection.inner.status is not ServerStatus.CONNECTED:  # this loop never yields
            assert time.monotonic() < deadline, connection.inner.error
            time.sleep(0.05)  # noqa: ASYNC251 (the loop is kept busy on purpose)
        assert catalog.registry.server("feat").status is ServerStatus.CONNECTING
        await until(lambda: catalog.registry.server("feat").status is ServerStatus.CONNECTED)
        assert "readings" in {t.name for t in catalog.registry.server("feat").tools}
    finally:
        await catalog.close()
    assert marked_processes(marker) == []


async def test_a_tool_that_takes_too_long_is_cut_off_by_its_servers_tool_timeout(
    catalog_of: Any, tmp_path: Path
) -> None:
    record = tmp_path / "record.txt"
    entry = {**features("--record", str(record)), "toolTimeout": 0.5}
    catalog = await catalog_of({"feat": entry})
    result = await catalog.call_tool("feat", "wait_forever", {})
    assert text_of(result) == "tool 'wait_forever' on server 'feat' did not answer within 0.5 s"
    await until(lambda: "cancelled" in record.read_text())


async def test_list_changes_refresh_tools_prompts_resources_and_the_index(
    catalog_of: Any,
) -> None:
    catalog = await catalog_of({"feat": features()})
    assert text_of(await catalog.call_tool("feat", "grow", {})) == "grown"

    def grown() -> bool:
        entry = catalog.registry.server("feat")
        return (
            any(t.name == "fresh_tool" for t in entry.tools)
            and any(p.name == "fresh_prompt" for p in entry.prompts)
            and any(r.uri == "notes://fresh" for r in entry.resources)
        )

    await until(grown)
    await catalog.wait_ready()  # the index takes the new tool in its own thread
    assert catalog.index.search("fresh_tool")[0].tool.ref == "feat/fresh_tool"


async def test_a_server_that_speaks_only_2026_07_28_works_too(catalog_of: Any) -> None:
    catalog = await catalog_of({"modern": features("--modern")})
    entry = catalog.registry.server("modern")
    assert entry.status is ServerStatus.CONNECTED, entry.error
    assert catalog.connection("modern").protocol_version == "2026-07-28"  # type: ignore[union-attr]
    assert {p.name for p in entry.prompts} == {"greet", "review"}
    assert text_of(await catalog.call_tool("modern", "readings", {})) == "2 readings"
    contents = await catalog.read_resource("modern", "notes://today")
    assert contents.contents[0].text == "Buy milk. Call Ann."  # type: ignore[union-attr]
    await catalog.call_tool("modern", "grow", {})
    await until(
        lambda: any(t.name == "fresh_tool" for t in catalog.registry.server("modern").tools)
    )


async def test_a_tool_with_an_invalid_schema_is_skipped_and_the_others_load(
    catalog_of: Any,
) -> None:
    catalog = await catalog_of({"raw": stdio_entry("raw_server.py", "bad-tool")})
    entry = catalog.registry.server("raw")
    assert entry.status is ServerStatus.CONNECTED
    assert [t.name for t in entry.tools] == ["first", "second"]
    assert len(entry.warnings) == 2
    assert entry.warnings[0].startswith("tool 'broken' skipped: not a valid MCP tool")
    assert entry.warnings[1].startswith("tool #3 skipped: not a valid MCP tool")
    assert text_of(await catalog.call_tool("raw", "second", {})) == "second ran"


async def test_a_server_that_ends_during_startup_is_reported_with_the_real_reason(
    catalog_of: Any,
) -> None:
    catalog = await catalog_of({"raw": stdio_entry("raw_server.py", "bad-init")})
    entry = catalog.registry.server("raw")
    assert entry.status is ServerStatus.FAILED
    assert entry.error is not None
    assert entry.error.startswith("sent an invalid answer to initialize:")
    assert "exited with code 0" not in entry.error
    assert catalog.connection("raw").attempts == 1  # type: ignore[union-attr]


async def test_a_server_whose_first_start_fails_is_started_again(
    catalog_of: Any, tmp_path: Path
) -> None:
    counter = tmp_path / "starts"
    catalog = await catalog_of({"flaky": stdio_entry("flaky_server.py", str(counter))})
    entry = catalog.registry.server("flaky")
    assert entry.status is ServerStatus.CONNECTED, entry.error
    assert catalog.connection("flaky").attempts == 2  # type: ignore[union-attr]
    assert text_of(await catalog.call_tool("flaky", "which_start", {})) == "start 2"


async def test_a_server_that_always_exits_gives_up_after_three_attempts(
    catalog_of: Any,
) -> None:
    catalog = await catalog_of({"dead": stdio_entry("exit_server.py")})
    entry = catalog.registry.server("dead")
    assert entry.status is ServerStatus.FAILED
    assert entry.error is not None
    assert entry.error.startswith("exited with code")
    assert entry.error.endswith("(gave up after 3 attempts)")


# npx installs


@pytest.fixture
def fake_npx(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``npx`` is tests/servers/fake_npx.py, with its own npm cache."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(f'#!/bin/sh\nexec {sys.executable} {SERVERS / "fake_npx.py"} "$@"\n')
    npx.chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }


def test_package_runner_commands_are_recognised() -> None:
    run = package_run("npx", ["-y", "@softeria/ms-365-mcp-server@0.155.0", "--read-only"])
    assert run is not None
    assert (run.runner, run.name, run.version) == ("npx", "@softeria/ms-365-mcp-server", "0.155.0")
    with_package = package_run("/usr/bin/npx", ["--yes", "--package=pkg@2", "pkg-bin"])
    assert with_package is not None
    assert (with_package.name, with_package.version) == ("pkg", "2")
    assert package_run("uvx", ["--from", "git+https://x/y", "tool"]) is not None
    assert package_run("python", ["server.py"]) is None


async def test_an_install_longer_than_the_timeout_is_not_cut_short(
    fake_npx: dict[str, str],
) -> None:
    statuses: list[tuple[ServerStatus, str | None]] = []
    settings_env = {**os.environ, **fake_npx, "FAKE_NPX_INSTALL_SECONDS": "8"}
    spec = StdioServerConfig(
        name="slow", command="npx", args=("-y", "@test/slow-pkg@1.0.0"), timeout=5
    )
    connection = ServerConnection(
        spec,
        env=settings_env,
        project_dir=Path.cwd(),
        on_change=lambda c: statuses.append((c.status, c.detail)),
    )
    connection.start()
    try:
        await connection.wait_attempt()
        assert connection.status is ServerStatus.CONNECTED, connection.error
        assert connection.attempts == 1
        assert (ServerStatus.INSTALLING, "installing @test/slow-pkg@1.0.0 with npx") in statuses
        run = package_run("npx", list(spec.args))
        assert run is not None and is_installed(run, settings_env)
    finally:
        await connection.close()


async def test_a_half_written_install_is_removed_and_the_next_attempt_installs_cleanly(
    catalog_of: Any, fake_npx: dict[str, str]
) -> None:
    spec = "@test/broken-pkg@1.0.0"
    key = hashlib.sha512(spec.encode()).hexdigest()[:16]
    cache = Path(fake_npx["npm_config_cache"]) / "_npx" / key
    package = cache / "node_modules" / "@test" / "broken-pkg"
    package.mkdir(parents=True)
    (cache / "package.json").write_text('{"dependencies": {"@test/broken-pkg": "1.0.0"}}')
    (package / "package.json").write_text('{"name": "@test/broken-pkg", "version": "1.0.0"}')
    catalog = await catalog_of({"pkg": {"command": "npx", "args": ["-y", spec]}}, env=fake_npx)
    entry = catalog.registry.server("pkg")
    assert entry.status is ServerStatus.CONNECTED, entry.error
    assert catalog.connection("pkg").attempts == 2  # type: ignore[union-attr]
    assert (package / ".complete").exists()


def test_a_live_tool_and_its_cached_definition_are_the_same_record() -> None:
    """The connection thread reads a tool's record from its validated fields, the cached
    catalog (``bassi tools``) from the dumped definition: the digests must agree, or a tool the
    person allowed in one would be asked about again in the other. Every tool of the corpora."""
    corpora = Path(__file__).parent.parent / "bench" / "corpus"
    tools = [
        types.Tool.model_validate(tool, by_name=False)
        for path in sorted(corpora.glob("*/*.json"))
        for tool in json.loads(path.read_text())["tools"]
    ]
    assert len(tools) > 300
    for tool in tools:
        live = _tool_info("s", tool)
        cached = ToolInfo.from_mcp(
            "s", tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        assert (live, live.definition_hash, live.definition_chars) == (
            cached,
            cached.definition_hash,
            cached.definition_chars,
        )
