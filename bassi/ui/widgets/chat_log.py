"""The scrolling conversation: everything bassi shows goes here, newest at the bottom."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget


class ChatLog(VerticalScroll):
    """Anchored to the bottom: new output stays in view until the user scrolls up, and
    following resumes when they scroll back to the end (Textual's anchor does exactly this)."""

    def on_mount(self) -> None:
        self.anchor()

    async def add(self, *widgets: Widget) -> None:
        """Append ``widgets``; the first output under an echoed command sits right under it."""
        last = self.children[-1] if self.children else None
        if widgets and last is not None and last.has_class("command-echo"):
            widgets[0].add_class("-answer")
        await self.mount_all(widgets)

    async def clear(self) -> None:
        await self.remove_children()
