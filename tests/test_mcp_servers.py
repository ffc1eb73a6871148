"""What bassi and other engineers rely on: the shipped servers' names and tools, the same over
stdio and in process, and a default ``.mcp.json`` that starts real external servers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mcp import Client

from bassi.core.tools import ToolInfo, is_valid_server_name
from mcp_servers import SHIPPED_SERVERS
from tests.mcp_servers_support import connect

REPO = Path(__file__).resolve().parent.parent

EXPECTED_TOOLS = {
    "bash": ["mcp__bash__execute"],
    "web": ["mcp__web__search", "mcp__web__fetch"],
    "task_automation": ["mcp__task_automation__execute_python"],
}


async def test_shipped_factories_build_servers_with_the_promised_tools(tmp_path: Path) -> None:
    assert set(SHIPPED_SERVERS) == set(EXPECTED_TOOLS)
    for name, factory in SHIPPED_SERVERS.items():
        async with Client(factory(tmp_path), mode="legacy") as client:
            assert client.server_info is not None
            assert client.server_info.name == name
            listed = (await client.list_tools()).tools
        infos = [ToolInfo.from_mcp(name, t.model_dump(by_alias=True)) for t in listed]
        assert [info.qualified_name for info in infos] == EXPECTED_TOOLS[name]
        for info in infos:
            # The description is what search and the model read: it must say when to use it.
            assert re.search(r"\bUse it (for|to)\b", info.description), info.description
            assert info.input_schema["type"] == "object"
            assert info.input_schema["additionalProperties"] is False


@pytest.mark.parametrize("name", sorted(EXPECTED_TOOLS))
async def test_stdio_lists_the_same_tools_as_in_process(name: str, tmp_path: Path) -> None:
    listings = []
    for transport in ("memory", "stdio"):
        async with connect(name, transport, tmp_path) as client:
            listings.append(
                [t.model_dump(by_alias=True) for t in (await client.list_tools()).tools]
            )
    assert listings[0] == listings[1]


def test_default_mcp_json_names_pinned_external_servers() -> None:
    """The shipped ``.mcp.json`` starts at least two servers published by others, each with a
    command a fresh machine has and an exact package version, so a new release cannot change
    what a fresh clone starts."""
    servers = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]
    assert len(servers) >= 2
    for name, entry in servers.items():
        assert is_valid_server_name(name)
        assert name not in SHIPPED_SERVERS
        assert entry["command"] == "npx"
        package = next(arg for arg in entry["args"] if not arg.startswith("-"))
        assert re.fullmatch(r"@[\w-]+/[\w-]+@\d+\.\d+\.\d+", package), package
