"""Dialogs that appear while the person may be typing take no answer from a burst of keys.

A question bassi asks unbidden (may this tool run, may this project's servers start, a
server wants input) takes the keyboard from the prompt the person was typing in, and the rest
of their sentence would answer it: the "s" of "yes please" allows a whole server for good,
its Enter the focused button. So the dialog takes no key until the keyboard has been quiet
for ``QUIET_SECONDS``, since it appeared or since the key before; keys of that first burst
are dropped, and the dialog says so once, at its top (the container with the class
``guarded-dialog``). A dialog that only asks (``ANSWERS_ONLY``) also drops a letter that is
none of its answers after such a pause: someone who takes up a sentence again is typing, not
answering. From the first key that counts on, every key counts, so a form the dialog holds
can be typed in. Escape always counts (it is the safe answer), and so does a click: a pointer
is not typed ahead.
"""

from __future__ import annotations

import time
from typing import ClassVar, TypeVar

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

ResultT = TypeVar("ResultT")

QUIET_SECONDS = 1.0
"""Longer than the pauses within someone's typing, and the delay browsers give their security
dialogs before a key counts (Firefox's ``security.dialog_enable_delay``: 1 s); a person
reading the question takes longer."""
DROPPED = "What you were typing was not taken as an answer: read this, then choose."


class GuardedModal(ModalScreen[ResultT]):
    """A modal whose keys answer only once the keyboard was quiet (see the module)."""

    ANSWERS_ONLY: ClassVar[bool] = True
    """Whether the dialog's only keys are its answers (no field to type in)."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._last_key = time.monotonic()
        self._armed = False

    def on_screen_resume(self) -> None:
        self._last_key = time.monotonic()
        self._armed = False

    def on_key(self, event: events.Key) -> None:
        if self._armed or event.key == "escape":
            return
        now = time.monotonic()
        quiet = now - self._last_key >= QUIET_SECONDS
        self._last_key = now
        if quiet and not (self.ANSWERS_ONLY and event.is_printable and not self._answers(event)):
            self._armed = True
            return
        event.prevent_default()
        event.stop()
        dialog = self.query_one(".guarded-dialog")
        if not dialog.query(".type-ahead-note"):
            dialog.mount(Static(DROPPED, classes="type-ahead-note"), before=0)

    def _answers(self, event: events.Key) -> bool:
        return any(
            event.key in binding.key.split(",")
            for binding in self.BINDINGS
            if isinstance(binding, Binding)
        )
