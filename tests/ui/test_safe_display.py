"""Text from servers and the model is shown as the characters it is: Rich/Textual markup,
ANSI escapes and control characters in it must not style, act, or move the cursor."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from bassi.core.registry import Registry, ServerStatus
from bassi.core.search import SearchHit
from bassi.core.tools import Origin, ToolInfo
from bassi.ui.widgets.catalog import CatalogView
from bassi.ui.widgets.messages import UserMessage
from bassi.ui.widgets.reply import AssistantMessage
from bassi.ui.widgets.search_results import SearchResults
from bassi.ui.widgets.tool_call import ToolCallBlock
from bassi.ui.widgets.tool_card import ToolCard
from tests.progressive_fixtures import policy_of
from tests.ui.helpers import WidgetHost, screen_text, styles_of

HOSTILE = "[bold red]LOUD[/] [@click=app.quit]quit[/] \x1b[2J\x1b[31mansi\x1b[0m bell\x07 end"
SHOWN = "[bold red]LOUD[/] [@click=app.quit]quit[/] ansi bell end"

HOSTILE_TOOL = ToolInfo(
    "evil",
    "evil_tool[blink]",
    HOSTILE + "\nsecond line " + HOSTILE,
    {
        "type": "object",
        "properties": {"arg[red]": {"type": "string", "description": HOSTILE}},
        "required": ["arg[red]"],
    },
)


def _assert_inert(app: WidgetHost, minimum: int = 1) -> None:
    text = screen_text(app)
    assert text.count(SHOWN) >= minimum, text
    assert "\x1b" not in text and "\x07" not in text
    for style in styles_of(app, "LOUD"):
        assert not style.blink
        assert style.color is None or style.color.name != "red"
        assert style.meta.get("@click") is None


async def test_tool_card_shows_hostile_description_and_schema_literally(tmp_path: Path) -> None:
    registry = Registry()
    registry.add_server("evil", Origin.EXTERNAL)
    registry.set_tools("evil", [HOSTILE_TOOL])
    policy = policy_of(registry, tmp_path)
    app = WidgetHost(lambda: ToolCard(HOSTILE_TOOL, policy))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        _assert_inert(app, minimum=3)  # description (2 lines) and the parameter description
        text = screen_text(app)
        assert "evil/evil_tool[blink]" in text
        assert "arg[red]" in text
        # A click on the would-be link must not quit the app.
        await pilot.click(offset=(10, 3))
        assert app.is_running


async def test_catalog_with_hostile_server_error_and_tool_names() -> None:
    registry = Registry()
    registry.add_server("evil", Origin.EXTERNAL, target="run " + HOSTILE)
    registry.set_tools("evil", [HOSTILE_TOOL])
    registry.add_server("bad", Origin.EXTERNAL)
    registry.set_status("bad", ServerStatus.FAILED, HOSTILE)
    app = WidgetHost(lambda: CatalogView(registry))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        _assert_inert(app, minimum=2)
        assert "evil_tool[blink]" in screen_text(app)


async def test_search_results_and_tool_call_and_messages_are_inert() -> None:
    hit = SearchHit(HOSTILE_TOOL, 1.0, ("loud",))
    block = ToolCallBlock("evil_tool[blink]", "evil", {"q": HOSTILE})
    block.finish(HOSTILE, is_error=False)
    assistant = AssistantMessage()
    app = WidgetHost(
        lambda: SearchResults([hit]),
        lambda: block,
        lambda: UserMessage(HOSTILE),
        lambda: assistant,
    )
    async with app.run_test(size=(200, 50)) as pilot:
        await assistant.write(HOSTILE)
        await assistant.finish()
        await pilot.pause()
        text = screen_text(app)
        # Search row (description first line), tool result, user message and the reply.
        assert text.count("LOUD") >= 4, text
        assert "\x1b" not in text and "\x07" not in text
        for style in styles_of(app, "LOUD"):
            assert style.color is None or style.color.name != "red"
            assert style.meta.get("@click") is None


def test_search_highlight_emphasises_matched_words_only() -> None:
    from bassi.ui.widgets.search_results import MATCH_STYLE, highlight

    text = highlight("Send emails and list messages", ["email", "messages"])
    styled = {text.plain[s.start : s.end] for s in text.spans if str(s.style) == MATCH_STYLE}
    assert styled == {"emails", "messages"}
    assert isinstance(text, Text)
