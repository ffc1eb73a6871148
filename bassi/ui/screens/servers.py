"""``/mcp``: every server, what it offers, what is wrong with it, and what to do about it.

A table of servers (live: it follows the registry) and, for the highlighted one, where it runs
(secrets masked), its last error with the stderr tail, skipped tools, and the actions that
make sense for its state, each on a key shown in the footer: reconnect (re-reading
``.mcp.json``), disable or enable for this session or for good, sign in or out, approve a
project server that waits for approval. The actions
run in workers, so a slow server never blocks the screen.
"""

from __future__ import annotations

import asyncio
import webbrowser
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from bassi.core.catalog import Catalog
from bassi.core.mcp_config import HttpServerConfig
from bassi.core.registry import ServerEntry, ServerStatus
from bassi.ui.safe import plain, plain_line, plain_text
from bassi.ui.wording import STATUS_STYLE, counted

COLUMNS = ("server", "status", "transport", "tools", "prompts", "resources")

OpenUrl = Callable[[str], None]


def open_in_browser(url: str) -> None:
    webbrowser.open(url)


class ServerManagerScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "reconnect", "Reconnect"),
        Binding("d", "disable(False)", "Disable"),
        Binding("D", "disable(True)", "Disable for good"),
        Binding("e", "enable(False)", "Enable"),
        Binding("E", "enable(True)", "Enable for good"),
        Binding("a", "approve", "Approve"),
        Binding("s", "sign_in", "Sign in"),
        Binding("o", "sign_out", "Sign out"),
        Binding("escape", "dismiss", "Close"),
    ]

    def __init__(self, catalog: Catalog, open_url: OpenUrl = open_in_browser) -> None:
        super().__init__(classes="servers-screen")
        self.catalog = catalog
        self.open_url = open_url
        self._unsubscribe: Callable[[], None] | None = None
        self.message = Content("")

    def compose(self) -> ComposeResult:
        with Vertical(classes="servers-dialog") as dialog:
            dialog.border_title = Content("MCP servers")
            yield DataTable(cursor_type="row", zebra_stripes=True, id="servers-table")
            with VerticalScroll(classes="server-detail"):
                yield Static(id="server-detail")
            yield Static(id="servers-message")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column)
        self._unsubscribe = self.catalog.registry.subscribe(self._registry_changed)
        self.refresh_servers()
        table.focus()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _registry_changed(self, _server: str) -> None:
        self.call_later(self.refresh_servers)

    @property
    def selected(self) -> ServerEntry | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.catalog.registry.server(key) if key else None

    def refresh_servers(self) -> None:
        table = self.query_one(DataTable)
        entries = self.catalog.registry.servers()
        known = {str(k.value) for k in table.rows}
        for entry in entries:
            cells = self._cells(entry)
            if entry.name not in known:
                table.add_row(*cells, key=entry.name)
                continue
            for column, value in zip(COLUMNS, cells, strict=True):
                table.update_cell(entry.name, column, value)
        self.show_detail()
        self.refresh_bindings()

    def _cells(self, entry: ServerEntry) -> tuple[Text, ...]:
        config = self.catalog.config_for(entry.name)
        transport = config.type if config is not None else "in-process"
        return (
            plain_text(entry.name, max_chars=64),
            Text(entry.status.value, style=STATUS_STYLE.get(entry.status, "")),
            Text(transport),
            Text(str(len(entry.tools))),
            Text(str(len(entry.prompts))),
            Text(str(len(entry.resources) + len(entry.templates))),
        )

    @on(DataTable.RowHighlighted)
    def show_detail(self) -> None:
        entry = self.selected
        detail = self.query_one("#server-detail", Static)
        if entry is None:
            detail.update("No servers. Add some to .mcp.json.")
            return
        lines = [
            Content.styled(entry.name, "bold")
            + Content("  ")
            + Content.styled(entry.status.value, STATUS_STYLE.get(entry.status, "")),
            plain_line(self.catalog.display_target(entry.name), 300, "$foreground-muted"),
            Content(
                f"{counted(len(entry.tools), 'tool')} · {counted(len(entry.prompts), 'prompt')}"
                f" · {counted(len(entry.resources) + len(entry.templates), 'resource')}"
            ),
        ]
        config = self.catalog.config_for(entry.name)
        if isinstance(config, HttpServerConfig):
            signed = self.catalog.oauth.signed_in(config)
            lines.append(Content("signed in" if signed else "not signed in"))
        if entry.detail:
            lines.append(plain(entry.detail, "$text-warning", max_chars=600))
        if entry.status is ServerStatus.NEEDS_AUTH:
            lines.append(Content.styled("Needs sign-in: press s to sign in.", "$text-warning"))
        elif entry.status is ServerStatus.PENDING:
            lines.append(
                Content.styled("Waits for your approval: press a to approve.", "$text-warning")
            )
        elif entry.error:
            lines.append(plain(entry.error, "$text-error", max_chars=4_000))
        lines += [plain(f"⚠ {w}", "$text-warning", max_chars=600) for w in entry.warnings]
        detail.update(Content("\n").join(lines))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the actions that make sense for the highlighted server are offered."""
        entry = self.selected if self.is_mounted else None
        if action == "dismiss":
            return True
        if entry is None:
            return False
        disabled = entry.status is ServerStatus.DISABLED
        http = isinstance(self.catalog.config_for(entry.name), HttpServerConfig)
        pending = entry.status is ServerStatus.PENDING
        if action == "approve":
            return pending
        if pending:
            return action == "disable"
        if action == "reconnect":
            return not disabled
        if action == "disable":
            return not disabled or (parameters == (True,) and entry.name not in self._for_good)
        if action == "enable":
            return disabled or (parameters == (True,) and entry.name in self._for_good)
        if action == "sign_in":
            return http and not disabled
        if action == "sign_out":
            config = self.catalog.config_for(entry.name)
            return isinstance(config, HttpServerConfig) and self.catalog.oauth.signed_in(config)
        return True

    @property
    def _for_good(self) -> set[str]:
        return self.catalog.memory.disabled

    def say(self, text: str, style: str = "") -> None:
        self.message = plain(text, style)
        self.query_one("#servers-message", Static).update(self.message)

    def action_reconnect(self) -> None:
        if (entry := self.selected) is not None:
            self.run_action_for(entry.name, "reconnect")

    def action_disable(self, for_good: bool) -> None:
        if (entry := self.selected) is not None:
            self.run_action_for(entry.name, "disable", for_good)

    def action_enable(self, for_good: bool) -> None:
        if (entry := self.selected) is not None:
            self.run_action_for(entry.name, "enable", for_good)

    def action_approve(self) -> None:
        if (entry := self.selected) is not None:
            self.run_action_for(entry.name, "approve")

    def action_sign_in(self) -> None:
        if (entry := self.selected) is not None:
            self.sign_in(entry.name)

    def action_sign_out(self) -> None:
        if (entry := self.selected) is not None:
            self.run_action_for(entry.name, "sign_out")

    @work(group="server-action", exit_on_error=False)
    async def run_action_for(self, server: str, action: str, for_good: bool = False) -> None:
        catalog = self.catalog
        try:
            if action == "reconnect":
                self.say(f"Reconnecting {server} (re-reading .mcp.json)…")
                await catalog.reconnect(server)
                await catalog.wait_ready()
                entry = catalog.registry.server(server)
                self.say(f"{server}: {entry.status.value}.")
            elif action == "disable":
                await catalog.disable(server, for_good=for_good)
                self.say(f"{server} is disabled {'for good' if for_good else 'for this session'}.")
            elif action == "enable":
                await catalog.enable(server, for_good=for_good)
                self.say(f"{server} is enabled; connecting…")
            elif action == "approve":
                catalog.approve([server])
                self.say(f"{server} is approved as it is configured now; connecting…")
            elif action == "sign_out":
                await catalog.sign_out(server)
                self.say(f"Signed out of {server}; its tokens are deleted.")
        except (KeyError, ValueError, PermissionError) as exc:
            self.say(str(exc), "$text-error")
        self.refresh_servers()

    @work(group="sign-in", exclusive=True, exit_on_error=False)
    async def sign_in(self, server: str) -> None:
        async def show_and_open(url: str) -> None:
            self.say(f"Sign in to {server} in your browser. If it did not open, go to:\n{url}")
            await asyncio.to_thread(self.open_url, url)

        from bassi.core.oauth import SignInError  # loaded by the sign-in itself

        try:
            await self.catalog.sign_in(server, show_and_open)
        except (SignInError, ValueError) as exc:
            self.say(f"Sign-in to {server} failed: {exc}", "$text-error")
            return
        await self.catalog.wait_ready()
        entry = self.catalog.registry.server(server)
        tools = counted(len(entry.tools), "tool")
        self.say(f"Signed in to {server}: {entry.status.value}, {tools}.")
        self.refresh_servers()
