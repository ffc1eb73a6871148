"""Tool-call blocks, search tables and the prompt, driven the way a person uses them."""

from __future__ import annotations

from pathlib import Path

from textual.color import Color

from bassi.core.registry import Registry
from bassi.core.search import SearchHit
from bassi.core.tools import Origin, ToolInfo
from bassi.ui.widgets.prompt import PromptInput
from bassi.ui.widgets.search_results import SearchResults
from bassi.ui.widgets.tool_call import ToolCallBlock
from bassi.ui.widgets.tool_card import ToolCard
from tests.progressive_fixtures import policy_of
from tests.ui.helpers import WidgetHost, screen_text

TOOLS = [
    ToolInfo("mail", "list_messages", "List mail messages in a folder"),
    ToolInfo("mail", "send_message", "Send an email message"),
    ToolInfo("git", "git_status", "Show the working tree status"),
]


async def test_long_result_is_truncated_and_expands() -> None:
    block = ToolCallBlock("execute", "bash", {"command": "seq 1 50"})
    app = WidgetHost(lambda: block)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        assert "running" in screen_text(app)
        block.finish("\n".join(f"row {i}" for i in range(1, 51)), is_error=False)
        await pilot.pause()
        text = screen_text(app)
        assert 'command="seq 1 50"' in text
        assert "row 6" in text and "row 7" not in text
        assert "44 more lines" in text
        block.focus()
        await pilot.press("enter")
        text = screen_text(app)
        assert "row 30" in text and "more lines" not in text


async def test_error_result_is_marked_and_red() -> None:
    block = ToolCallBlock("fetch", "web", {"url": "http://x"})
    block.finish("HTTP 404: not found", is_error=True)
    app = WidgetHost(lambda: block)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        assert "✗ error" in screen_text(app)
        assert block.has_class("-error")
        result = block.query_one(".tool-call-result")
        assert result.styles.color == Color.parse(app.get_css_variables()["text-error"])


async def test_row_selection_by_keyboard_and_mouse_chooses_the_tool() -> None:
    hits = [SearchHit(t, 3.0 - i, ("message",)) for i, t in enumerate(TOOLS)]
    chosen: list[str] = []

    class Host(WidgetHost):
        def on_search_results_tool_chosen(self, event: SearchResults.ToolChosen) -> None:
            chosen.append(event.tool.ref)

    app = Host(lambda: SearchResults(hits))
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert text.index("list_messages") < text.index("send_message") < text.index("git_status")
        app.query_one(SearchResults).focus()
        await pilot.press("down", "enter")
        assert chosen == ["mail/send_message"]
        row = screen_text(app).splitlines()
        y = next(i for i, line in enumerate(row) if "git_status" in line)
        await pilot.click(offset=(10, y))
        await pilot.click(offset=(10, y))
        await pilot.pause()
        assert chosen[-1] == "git/git_status"


def prompt_host(history: list[str]) -> WidgetHost:
    return WidgetHost(lambda: PromptInput(history, lambda: TOOLS, lambda: TOOLS[:1], id="prompt"))


async def test_up_and_down_walk_history_and_keep_the_draft() -> None:
    app = prompt_host(["first", "second"])
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"draft")
        await pilot.press("up")
        assert prompt.value == "second"
        await pilot.press("up", "up")
        assert prompt.value == "first"
        await pilot.press("down")
        assert prompt.value == "second"
        await pilot.press("down")
        assert prompt.value == "draft"


async def test_tab_completes_commands_and_tool_names() -> None:
    app = prompt_host([])
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/tools s", "tab")
        assert prompt.value == "/tools search "
        prompt.value = ""
        await pilot.press(*"/tool send", "tab")
        assert prompt.value == "/tool send_message"
        prompt.value = ""
        await pilot.press(*"/tool unpin ", "tab")
        assert prompt.value == "/tool unpin list_messages"


PULL_REQUEST = ToolInfo.from_mcp(
    "github",
    {
        "name": "create_pull_request",
        "description": "Create a new pull request.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "draft": {"type": "boolean", "default": False, "description": "Open as a draft"},
            },
            "required": ["owner"],
        },
    },
)


async def test_the_tool_card_stays_readable_in_a_40_column_terminal(tmp_path: Path) -> None:
    """Five table columns in 36 cells left an ellipsis for every word; narrow, each parameter
    is a line of facts with its description under it. Wide, it is still the table."""
    registry = Registry()
    registry.add_server("github", Origin.EXTERNAL)
    registry.set_tools("github", [PULL_REQUEST])
    policy = policy_of(registry, tmp_path)
    app = WidgetHost(lambda: ToolCard(PULL_REQUEST, policy))
    async with app.run_test(size=(40, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "│ owner  string, required" in text
        assert "│   Repository owner" in text
        assert "│ draft  boolean, optional, default" in text
        assert "│   Open as a draft" in text
        assert "…" not in text
    wide = WidgetHost(lambda: ToolCard(PULL_REQUEST, policy))
    async with wide.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        rows = [" ".join(row.strip(" │").split()) for row in screen_text(wide).splitlines()]
        assert "name type required default description" in rows
        assert "owner string yes Repository owner" in rows
