"""The live catalog: what a person sees while servers connect, fail or fill in."""

from __future__ import annotations

from pathlib import Path

from bassi.core.registry import Registry, ServerStatus
from bassi.core.search import SearchHit
from bassi.core.tools import Origin, ToolInfo
from bassi.ui.widgets.catalog import (
    PREVIEW_TOOLS,
    SPINNER,
    STARTING_ICON,
    CatalogView,
    ServerGroup,
)
from bassi.ui.widgets.search_results import SearchResults
from bassi.ui.widgets.tool_card import ToolCard
from tests.progressive_fixtures import policy_of, registry_of, tool_def
from tests.ui.helpers import WidgetHost, screen_text


def _registry() -> Registry:
    registry = Registry()
    registry.add_server("bash", Origin.IN_PROCESS)
    registry.set_tools("bash", [ToolInfo("bash", "execute", "Run a shell command")])
    registry.add_server("git", Origin.EXTERNAL, target="uvx mcp-server-git")
    registry.set_tools("git", [ToolInfo("git", f"git_op_{i:02}") for i in range(12)])
    return registry


async def test_in_process_first_then_external_with_target_and_total() -> None:
    registry = _registry()
    # Added first, but external: must still be listed after the in-process server.
    registry.add_server("slow", Origin.EXTERNAL, target="python slow.py")
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert text.index("bash") < text.index("git") < text.index("slow")
        assert "in-process" in text
        assert "uvx mcp-server-git" in text
        assert "python slow.py" in text
        assert "connecting" in text
        assert "13 tools available on 3 servers" in text


async def test_slow_server_fills_in_and_failed_server_shows_reason() -> None:
    registry = _registry()
    registry.add_server("slow", Origin.EXTERNAL, target="python slow.py")
    registry.add_server("broken", Origin.EXTERNAL, target="nonexistent --flag")
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        assert "slow_tool" not in screen_text(app)

        registry.set_tools("slow", [ToolInfo("slow", "slow_tool", "arrives late")])
        registry.set_status("broken", ServerStatus.FAILED, "exit code 127: command not found")
        await pilot.pause()

        text = screen_text(app)
        slow_line = next(line for line in text.splitlines() if " slow " in line)
        assert "1 tool" in slow_line and "connecting" not in slow_line
        assert "slow_tool" in text
        assert "failed" in text
        assert "exit code 127: command not found" in text
        assert "14 tools available on 4 servers · 3 connected · 1 failed" in text


async def test_many_tools_show_a_preview_and_expand_on_enter() -> None:
    registry = _registry()
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert f"git_op_{PREVIEW_TOOLS - 1:02}" in text
        assert f"git_op_{PREVIEW_TOOLS:02}" not in text
        assert f"+{12 - PREVIEW_TOOLS} more" in text

        group = next(g for g in app.query(ServerGroup) if g.entry.name == "git")
        group.focus()
        await pilot.press("enter")
        text = screen_text(app)
        assert "git_op_11" in text and "more" not in text

        await pilot.click(group)
        assert "git_op_11" not in screen_text(app)


async def test_no_servers_says_how_to_add_them() -> None:
    app = WidgetHost(lambda: CatalogView(Registry(), ["server 'x': missing 'command'"]))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "No MCP servers configured" in text
        assert "⚠ server 'x': missing 'command'" in text


async def test_clashing_and_look_alike_names_are_shown_for_what_they_are(tmp_path: Path) -> None:
    registry = registry_of(
        {"tricky": [tool_def("rm.all"), tool_def("rm_all"), tool_def("exec\u200bute")]}
    )
    policy = policy_of(registry, tmp_path)
    tool = registry.resolve("tricky/rm.all")
    app = WidgetHost(lambda: CatalogView(registry, policy=policy), lambda: ToolCard(tool, policy))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "rm.all (name clash: cannot be called), rm_all (name clash" in text
        assert "exec⟨U+200B⟩ute" in text and "execute" not in text
        assert "Cannot be called: 'rm_all' of the same server also reach the model as" in text


async def test_a_pending_server_says_it_waits_for_approval_and_what_it_would_run() -> None:
    registry = Registry()
    registry.add_server(
        "fresh", Origin.EXTERNAL, target="npx fresh-server", status=ServerStatus.PENDING
    )
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "fresh  waiting for your approval (/approve)  npx fresh-server" in text
        assert "0 tools available on 1 server · 1 waiting for approval" in text


async def test_search_results_show_what_each_server_declares_about_its_tool() -> None:
    tool = ToolInfo(
        "files",
        "read_file",
        "Read a file.",
        annotations={"readOnlyHint": True, "openWorldHint": False, "title": "Read"},
    )
    wiper = ToolInfo("files", "wipe", "Delete it all.", annotations={"destructiveHint": True})
    hits = [SearchHit(tool, 2.0, ("read",)), SearchHit(wiper, 1.0, ())]
    app = WidgetHost(lambda: SearchResults(hits))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "[read-only, closed world] Read a file." in text
        assert "[destructive] Delete it all." in text


async def test_one_spinner_on_the_total_line_while_servers_start() -> None:
    registry = _registry()
    registry.add_server("slow", Origin.EXTERNAL, target="python slow.py")
    registry.add_server("slower", Origin.EXTERNAL, target="python slower.py")
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(100, 40)) as pilot:
        app.animation_level = "full"
        registry.set_status("slower", ServerStatus.CONNECTING, detail="installing")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        total = next(line for line in lines if "tools available" in line)
        assert total.strip()[0] in SPINNER
        for name in ("slow", "slower"):
            line = next(line for line in lines if f" {name} " in line)
            assert line.strip().startswith(STARTING_ICON)
            assert not any(frame in line for frame in SPINNER)

        registry.set_tools("slow", [ToolInfo("slow", "slow_tool")])
        registry.set_tools("slower", [ToolInfo("slower", "slower_tool")])
        await pilot.pause()
        total = next(line for line in screen_text(app).splitlines() if "tools available" in line)
        assert not any(frame in total for frame in SPINNER)
        assert total.strip().startswith("15 tools available on 4 servers")


async def test_wrapped_tool_names_stay_under_their_server() -> None:
    registry = _registry()
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(40, 40)) as pilot:
        group = next(g for g in app.query(ServerGroup) if g.entry.name == "git")
        group.focus()
        await pilot.press("enter")
        lines = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(lines) if "git_op_00" in line)
        last = next(i for i, line in enumerate(lines) if "git_op_11" in line)
        assert last - first >= 3  # twelve names do not fit on one 40-column line
        assert all(line.startswith("   ") and line.strip() for line in lines[first : last + 1])
        assert not lines[first - 1].startswith("   ")  # the server's own line is not indented
