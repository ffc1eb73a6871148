"""What the app looks like, feature by feature, at 80x24 and a wide terminal, dark and light.

Deterministic by construction: servers are waited for (no spinner), the cursor does not
blink, commands are started as ``python notes_server.py`` (no machine paths), replies come
from the scripted model, and times shown are pinned (conversations' dates, in UTC).
Update after an intended change with ``pytest tests/ui/test_snapshots.py --snapshot-update``.

One class per feature, each test run over ``LOOKS``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest
from textual.content import Content
from textual.pilot import Pilot

from bassi.core.runtime import ApprovalRequest
from bassi.core.search import SearchHit
from bassi.core.settings import ToolsMode
from bassi.core.tools import ToolInfo
from bassi.ui.app import BassiApp
from bassi.ui.screens.approval import ApprovalScreen
from bassi.ui.screens.resume import ResumeScreen
from bassi.ui.screens.servers import ServerManagerScreen
from bassi.ui.widgets.messages import Notice
from bassi.ui.widgets.prompt import PromptInput
from bassi.ui.widgets.search_results import SearchResults
from tests.scripted_model import ScriptedModel, Text, reply, text, tool_call
from tests.transcripts import SESSION, transcript_lines, transcript_path
from tests.ui.conftest import AppFactory, python_first
from tests.ui.helpers import WidgetHost, submit, wait_for

SnapCompare = Callable[..., bool]
Steps = Callable[[Pilot[Any]], Awaitable[None]]

LOOKS = pytest.mark.parametrize(
    ("size", "theme"),
    [
        ((80, 24), "textual-dark"),
        ((80, 24), "textual-light"),
        ((160, 48), "textual-dark"),
        ((160, 48), "textual-light"),
    ],
    ids=["80x24-dark", "80x24-light", "wide-dark", "wide-light"],
)


def after_start(*lines: str, then: Steps | None = None, pin: str = "") -> Steps:
    """Wait for the servers, pin ``pin`` (it runs without asking), send ``lines`` as typed,
    then run ``then``."""

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
        if pin:
            app.runtime.pin(pin)
        for line in lines:
            await submit(pilot, line)
        if then is not None:
            await then(pilot)
        await pilot.pause()

    return run_before


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times shown in UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def themed(app: BassiApp, theme: str) -> BassiApp:
    app.theme = theme
    return app


class TestStartup:
    @LOOKS
    def test_catalog(
        self, snap_compare: SnapCompare, make_app: AppFactory, size: Any, theme: str
    ) -> None:
        app = themed(make_app(), theme)
        assert snap_compare(app, terminal_size=size, run_before=after_start())


class TestChat:
    @LOOKS
    def test_streamed_reply_and_tool_call(
        self,
        snap_compare: SnapCompare,
        make_app: AppFactory,
        scripted_model: ScriptedModel,
        agent_env: Mapping[str, str],
        size: Any,
        theme: str,
    ) -> None:
        scripted_model.script(
            reply(
                Text("Let me note that. Here is **why** it matters:\n\n- milk\n- eggs\n", 4),
                tool_call("mcp__notes__add_note", {"text": "buy milk", "tag": "shopping"}),
                input_tokens=120,
                output_tokens=30,
            ),
            text("Added it to your notes under *shopping*."),
        )

        async def replied(pilot: Pilot[Any]) -> None:
            app = pilot.app
            assert isinstance(app, BassiApp)
            await wait_for(
                pilot,
                lambda: scripted_model.remaining == 0 and not app.chat.streaming,
                60,
                "the reply",
            )

        app = make_app(env=python_first(agent_env), tools_mode=ToolsMode.ALL)
        run_before = after_start("remember to buy milk", then=replied, pin="notes/add_note")
        assert snap_compare(themed(app, theme), terminal_size=size, run_before=run_before)


class TestToolCard:
    @LOOKS
    def test_card(
        self, snap_compare: SnapCompare, make_app: AppFactory, size: Any, theme: str
    ) -> None:
        app = themed(make_app(), theme)
        run_before = after_start("/tool notes/add_note")
        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestApproval:
    """The dialog as it is asked (the runtime asks it before an unapproved call)."""

    @LOOKS
    def test_dialog(
        self, snap_compare: SnapCompare, make_app: AppFactory, size: Any, theme: str
    ) -> None:
        async def ask(pilot: Pilot[Any]) -> None:
            app = pilot.app
            assert isinstance(app, BassiApp)
            tool = app.runtime.resolve("notes/add_note")
            decision = app.runtime.policy.decide(tool)
            arguments = {"text": "buy milk", "tag": "shopping"}
            request = ApprovalRequest(tool, arguments, decision, tool.qualified_name)
            target = app.runtime.catalog.registry.server("notes").target
            await app.push_screen(ApprovalScreen(request, server_target=target))
            await pilot.pause()

        app = themed(make_app(), theme)
        assert snap_compare(app, terminal_size=size, run_before=after_start(then=ask))


class TestResume:
    @LOOKS
    def test_picker(
        self,
        snap_compare: SnapCompare,
        make_app: AppFactory,
        utc: None,
        size: Any,
        theme: str,
    ) -> None:
        app = themed(make_app(), theme)
        titles = ["plan the garden", "fix the build on CI", "summarise the meeting notes"]
        for n, title in enumerate(titles):
            session = f"{n:08d}-3f0e-4a53-9d8a-0d2b4c1d9e11"
            lines = transcript_lines(
                [
                    {"role": "user", "content": title},
                    {"role": "assistant", "content": [{"type": "text", "text": "Sure."}]},
                ]
            )
            path = transcript_path(app.runtime.settings, session)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"\n".join(lines).replace(SESSION.encode(), session.encode()) + b"\n")
            stamp = 1_795_000_000 + n * 86_400
            os.utime(path, (stamp, stamp))

        async def picker(pilot: Pilot[Any]) -> None:
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, ResumeScreen), 20)
            await pilot.pause()

        run_before = after_start("/resume", then=picker)
        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestMcpScreen:
    """``/mcp`` with a connected server and a failed one highlighted: its target, its error
    and the actions its state offers."""

    @LOOKS
    def test_manager(
        self, snap_compare: SnapCompare, make_app: AppFactory, size: Any, theme: str
    ) -> None:
        async def failed_one(pilot: Pilot[Any]) -> None:
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, ServerManagerScreen), 20)
            await pilot.pause()
            await pilot.press("down", "down")  # the server whose command is missing
            await pilot.pause()

        app = themed(make_app(), theme)
        assert snap_compare(
            app, terminal_size=size, run_before=after_start("/mcp", then=failed_one)
        )


class TestSearch:
    def test_results_table(self, snap_compare: SnapCompare) -> None:
        """Fixed hits: the look of the table (columns, fitted descriptions, highlighted
        terms, 0-1 scores, the weak label) must not change when the search engine's scores
        are tuned."""
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
