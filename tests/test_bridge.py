"""The proxy each server reaches the CLI as: lists only what is exposed, forwards calls to the
one server process the catalog started, passes results back as they came, and refuses
hidden tools itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client, types

from bassi.core.bridge import CallTracker, proxy_server
from bassi.core.catalog import Catalog
from bassi.core.exposure import ToolExposure
from bassi.core.permissions import hidden_message
from bassi.core.settings import Settings, ToolsMode
from tests.discovery_fixtures import text_of
from tests.progressive_fixtures import write_ledger_config


@pytest.fixture
async def catalog(tmp_path: Path) -> AsyncIterator[Catalog]:
    write_ledger_config(tmp_path, tmp_path / "ledger.txt")
    catalog = Catalog(Settings(project_dir=tmp_path, env={}), shipped={})
    try:
        await catalog.start()
        assert await catalog.wait_ready(30)
        yield catalog
    finally:
        await catalog.close()


async def test_proxy_lists_exposed_tools_forwards_calls_and_refuses_hidden_ones(
    catalog: Catalog, tmp_path: Path
) -> None:
    pins = {"mcp__ledger__record_expense"}
    settings = Settings(project_dir=tmp_path, env={}, tools_mode=ToolsMode.PROGRESSIVE)
    exposure = ToolExposure(
        catalog.registry, settings, pins=lambda: pins, is_denied=lambda _: False
    )

    def refusal(qualified: str) -> str | None:
        tool = catalog.registry.resolve(qualified)
        return None if exposure.reason(tool) else hidden_message(qualified)

    tracker = CallTracker()
    proxy = proxy_server("ledger", exposure, catalog, refusal, tracker)
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

        pins.add("mcp__ledger__close_books")
        crashed = await client.call_tool("close_books", {})
        assert isinstance(crashed, types.CallToolResult)
        assert crashed.is_error
        assert "books on fire" in text_of(crashed)
        assert not tracker.busy("ledger")
        assert (await client.list_tools()).tools == []

    lines = (tmp_path / "ledger.txt").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["expense 5.0 lunch", "closing"]
