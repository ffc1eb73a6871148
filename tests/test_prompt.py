"""The system prompt describes the tool landscape briefly and never lists the tools."""

from __future__ import annotations

from bassi.core.prompt import build_system_prompt
from bassi.core.settings import ToolsMode
from bassi.core.tools import Origin
from tests.progressive_fixtures import registry_of, tool_def


def test_one_line_per_server_with_count_and_topics_and_no_tool_names() -> None:
    office = [
        tool_def(name)
        for name in (
            "list-mail-messages",
            "send-mail",
            "get-mail-message",
            "list-calendar-events",
            "create-calendar-event",
            "list-todo-tasks",
            "get-drive-item",
        )
    ]
    registry = registry_of(
        {
            "ms-365": office,
            "fetch": [tool_def("fetch", "Fetches a URL from the internet.\nMore text.")],
        }
    )
    prompt = build_system_prompt(registry, ToolsMode.PROGRESSIVE)
    lines = [line for line in prompt.splitlines() if line.startswith("- ")]
    assert lines == [
        "- ms-365 (7 tools): mail, message, calendar, event, send, todo",
        "- fetch (1 tool): Fetches a URL from the internet.",
    ]
    for tool in registry.tools():
        assert tool.qualified_name not in prompt
        assert tool.name not in prompt or tool.name == "fetch"
    assert "mcp__bassi__tool_search" in prompt
    assert 'fails with "No such tool available"' in prompt


def test_failed_and_connecting_servers_say_so() -> None:
    registry = registry_of(
        {"git": [tool_def("git_status")], "slow": [tool_def("wait")]}, failed=["git"]
    )
    registry.add_server("later", Origin.EXTERNAL)
    prompt = build_system_prompt(registry, ToolsMode.ALL)
    assert "- git (1 tool): unavailable (exited with code 1)" in prompt
    assert "- later (0 tools): connecting" in prompt
    assert "Every tool of these servers is loaded." in prompt
    assert "tool_search" not in prompt
