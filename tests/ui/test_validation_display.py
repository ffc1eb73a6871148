"""What a person sees of argument validation: a refused call reads "refused" with its reason
(not a tool error), and a tool whose schema is invalid is marked in the catalog and its card,
whose parameter table has the nested fields."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from bassi.ui.widgets.tool_call import ToolCallBlock
from bassi.ui.widgets.tool_card import ToolCard
from tests.discovery_fixtures import stdio_entry
from tests.scripted_model import ScriptedModel, reply, text, tool_call
from tests.ui.conftest import AppFactory, python_first, write_servers
from tests.ui.helpers import screen_text, styles_of, submit, wait_for

BIG = (140, 60)


@pytest.fixture
def unchecked(project: Path, tmp_path: Path) -> Path:
    """The project's only server is the raw one that validates nothing; its call log."""
    log = tmp_path / "calls.jsonl"
    write_servers(
        project, {"unchecked": stdio_entry("unchecked_server.py", env={"CALLS_FILE": str(log)})}
    )
    return log


async def test_a_refused_call_reads_refused_with_its_reason(
    unchecked: Path,
    scripted_model: ScriptedModel,
    make_app: AppFactory,
    agent_env: Mapping[str, str],
) -> None:
    scripted_model.script(
        reply(tool_call("mcp__unchecked__put", {"n": "abc"})),
        text("I sent a string; fixing it."),
    )
    app = make_app(env=python_first(agent_env))
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        await submit(pilot, "/tool unchecked/put")  # pinned: runs without asking
        await submit(pilot, "store abc")
        await wait_for(
            pilot, lambda: "fixing it." in screen_text(app) and not app.chat.streaming, 60
        )
        block = app.screen.query_one(ToolCallBlock)
        shown = screen_text(app)
        assert block.refused == 'invalid arguments: $.n: expected integer, got string "abc"'
        assert block.has_class("-refused") and not block.has_class("-error")
        assert "unchecked/put  ⊘ refused: invalid arguments: $.n: expected integer" in shown
        assert "✗ error" not in shown
    assert calls_received(unchecked) == ""


def calls_received(log: Path) -> str:
    return log.read_text() if log.exists() else ""


async def test_an_invalid_schema_is_marked_in_the_catalog_and_the_card(
    unchecked: Path, make_app: AppFactory
) -> None:
    app = make_app()
    async with app.run_test(size=BIG) as pilot:
        await app.runtime.catalog.wait_ready(20)
        marked = "⚠ invalid input schema, calls go unchecked: legacy"
        await wait_for(pilot, lambda: marked in screen_text(app), 30, "the catalog's mark")
        assert styles_of(app, "invalid input schema")

        await submit(pilot, "/tool unchecked/legacy")
        card = app.screen.query(ToolCard).last()
        await wait_for(pilot, lambda: card.schema_problem is not None, 30, "the card's check")
        await pilot.pause()
        shown = screen_text(app)
        assert (
            '⚠ invalid input schema: its $ref "#/definitions/missing" points to nothing in '
            "the schema" in shown
        )
        assert "bassi cannot check this tool's calls; they reach the server unchecked." in shown

        await submit(pilot, "/tool unchecked/paint")
        card = app.screen.query(ToolCard).last()
        await wait_for(pilot, lambda: "coats[].minutes" in screen_text(app), 10, "the card")
        assert card.schema_problem is None
        shown = screen_text(app)
        assert re.search(r"│ coats\[\]\.minutes +integer +yes ", shown), shown
        assert "invalid input schema:" not in screen_text(app).split("unchecked/paint")[-1]
