"""The proxy each server reaches the CLI as: lists only what is exposed, forwards calls to the
one server process the catalog started, passes results back as they came, and refuses
hidden tools itself."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client, types

from bassi.core.bridge import Admissions, CallTracker, proxy_server
from bassi.core.catalog import Catalog
from bassi.core.settings import Settings
from tests.conftest import approve_project
from tests.discovery_fixtures import text_of
from tests.progressive_fixtures import policy_of, write_ledger_config


@pytest.fixture
async def catalog(tmp_path: Path) -> AsyncIterator[Catalog]:
    write_ledger_config(tmp_path, tmp_path / "ledger.txt")
    settings = Settings(project_dir=tmp_path, env=dict(os.environ))
    approve_project(settings)
    catalog = Catalog(settings, shipped={})
    try:
        await catalog.start()
        assert await catalog.wait_ready(30)
        yield catalog
    finally:
        await catalog.close()


async def test_proxy_lists_exposed_tools_forwards_calls_and_refuses_hidden_ones(
    catalog: Catalog, tmp_path: Path
) -> None:
    policy = policy_of(catalog.registry, tmp_path / "user", pins=["mcp__ledger__record_expense"])
    admissions = Admissions()
    for name in ("record_expense", "record_expense", "read_ledger", "close_books"):
        admissions.admit(f"mcp__ledger__{name}")
    tracker = CallTracker()
    proxy = proxy_server("ledger", policy, catalog, admissions, tracker)
    async with Client(proxy) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["record_expense"]

        ran = await client.call_tool("record_expense", {"amount": 5, "note": "lunch"})
        assert isinstance(ran, types.CallToolResult)
        assert not ran.is_error
        assert "recorded expense 5.0 (lunch)" in text_of(ran)
        assert ran.structured_content == {"result": "recorded expense 5.0 (lunch)"}

        invalid = await client.call_tool("record_expense", {"amount": "lots"})
        assert isinstance(invalid, types.CallToolResult)
        assert invalid.is_error
        assert "note" in text_of(invalid)

        hidden = await client.call_tool("read_ledger", {})
        assert isinstance(hidden, types.CallToolResult)
        assert hidden.is_error
        assert "mcp__bassi__tool_search" in text_of(hidden)

        policy.grants.pin(catalog.registry.resolve("close_books"))
        crashed = await client.call_tool("close_books", {})
        assert isinstance(crashed, types.CallToolResult)
        assert crashed.is_error
        assert "books on fire" in text_of(crashed)
        assert not tracker.busy("ledger")
        assert (await client.list_tools()).tools == []

    lines = (tmp_path / "ledger.txt").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["expense 5.0 lunch", "closing"]


async def test_proxy_runs_only_calls_the_gate_let_through(catalog: Catalog, tmp_path: Path) -> None:
    """Even a pinned tool runs only as often as ``can_use_tool`` let it through: a call that
    reached the proxy some other way is refused and nothing runs."""
    policy = policy_of(catalog.registry, tmp_path / "user", pins=["mcp__ledger__record_expense"])
    admissions = Admissions()
    proxy = proxy_server("ledger", policy, catalog, admissions, CallTracker())
    async with Client(proxy) as client:
        skipped = await client.call_tool("record_expense", {"amount": 1, "note": "sneaky"})
        assert isinstance(skipped, types.CallToolResult)
        assert skipped.is_error
        assert "did not pass bassi's approval" in text_of(skipped)
        admissions.admit("mcp__ledger__record_expense")
        ran = await client.call_tool("record_expense", {"amount": 2, "note": "gated"})
        assert isinstance(ran, types.CallToolResult)
        assert not ran.is_error
        again = await client.call_tool("record_expense", {"amount": 3, "note": "replayed"})
        assert isinstance(again, types.CallToolResult)
        assert again.is_error
    lines = (tmp_path / "ledger.txt").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["expense 2.0 gated"]
