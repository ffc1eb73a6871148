"""What the app looks like at 80x24: the startup catalog, a search table, a tool card.

Deterministic by construction: servers are waited for (no spinner), the cursor does not
blink, commands are started as ``python notes_server.py`` (no machine paths), and nothing
shows a time or a temp path.
Update after an intended change with ``pytest tests/ui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.content import Content
from textual.pilot import Pilot

from bassi.core.search import SearchHit
from bassi.core.tools import ToolInfo
from bassi.ui.app import BassiApp
from bassi.ui.widgets.messages import Notice
from bassi.ui.widgets.prompt import PromptInput
from bassi.ui.widgets.search_results import SearchResults
from tests.ui.conftest import AppFactory
from tests.ui.helpers import WidgetHost, submit

SnapCompare = Callable[..., bool]


def after_start(*lines: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, BassiApp)
        app.animation_level = "none"
        # The input's cursor blinks on a timer: shown steadily, the picture is the same
        # however long the servers took.
        app.screen.query_one(PromptInput).cursor_blink = False
        await pilot.pause()
        await app.runtime.catalog.wait_ready(20)
        await pilot.pause()
        for line in lines:
            await submit(pilot, line)
        await pilot.pause()

    return run_before


def test_startup_catalog(snap_compare: SnapCompare, make_app: AppFactory) -> None:
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=after_start())


def test_search_results_table(snap_compare: SnapCompare) -> None:
    """Fixed hits: the look of the table (columns, fitted descriptions, highlighted terms,
    0-1 scores, the weak label) must not change when the search engine's scores are tuned."""
    tools = [
        ToolInfo("mail", "list_mail_messages", "List mail messages in a folder, newest first."),
        ToolInfo("mail", "send_mail", "Send an email message to one or more recipients."),
        ToolInfo("outlook", "search_messages", "Search messages by sender, subject or text"),
        ToolInfo("notes", "add_note", "Add a note to the note book."),
    ]
    terms = ("mail", "messages")
    scores = (0.92, 0.71, 0.45, 0.21)
    hits = [
        SearchHit(tool, score, terms, weak=score < 0.4)
        for tool, score in zip(tools, scores, strict=True)
    ]
    app = WidgetHost(
        lambda: Notice(Content("Tools matching 'mail messages'")),
        lambda: SearchResults(hits),
    )
    assert snap_compare(app, terminal_size=(80, 24))


def test_tool_card(snap_compare: SnapCompare, make_app: AppFactory) -> None:
    run_before = after_start("/tool notes/add_note")
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_tool_card_wide_light_theme(snap_compare: SnapCompare, make_app: AppFactory) -> None:
    app = make_app()
    app.theme = "textual-light"
    run_before = after_start("/help", "/tool notes/add_note")
    assert snap_compare(app, terminal_size=(200, 60), run_before=run_before)
