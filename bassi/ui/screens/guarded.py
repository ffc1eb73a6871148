"""Dialogs that appear while the person may be typing take no answer from a burst of keys.

A question bassi asks unbidden (may this tool run, may this project's servers start, a
server wants input) takes the keyboard from the prompt the person was typing in, and the rest
of their sentence would answer it: the "s" of "yes please" allows a whole server for good,
its Enter the focused button. So the dialog takes no key until the keyboard has been quiet
for ``QUIET_SECONDS``, since it appeared or since the key before; keys of that first burst
are dropped, and the dialog says so once, at its top (the container with the class
``guarded-dialog``). From the first key after a pause on, every key counts, so a form the
dialog holds can be typed in. Escape always counts (it is the safe answer), and so does a
click: a pointer is not typed ahead.
"""

from __future__ import annotations

import time
from typing import TypeVar

from textual import events
from textual.screen import ModalScreen
from textual.widgets import Static

ResultT = TypeVar("ResultT")

QUIET_SECONDS = 0.6
"""Longer than the pause between two keys of someone typing (typically 0.1-0.3 s), short
enough that a person who has just read the question never notices it."""
DROPPED = "Keys typed as this appeared were not taken as an answer: read it, then choose."


class GuardedModal(ModalScreen[ResultT]):
    """A modal whose keys answer only once the keyboard was quiet (see the module)."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._last_key = time.monotonic()
        self._armed = False
        self._told = False

    def on_screen_resume(self) -> None:
        self._last_key = time.monotonic()
        self._armed = False

    def on_key(self, event: events.Key) -> None:
        if self._armed or event.key == "escape":
            return
        now = time.monotonic()
        self._armed = now - self._last_key >= QUIET_SECONDS
        self._last_key = now
        if self._armed:
            return
        event.prevent_default()
        event.stop()
        if not self._told:
            self._told = True
            dialog = self.query_one(".guarded-dialog")
            dialog.mount(Static(DROPPED, classes="type-ahead-note"), before=0)
