"""One catch-up for a burst of registry changes.

Thirty servers starting change the registry a hundred times in a few seconds, and what a
widget does about a change (laying out the catalog, summing the status line's figures over
every tool) costs the same for one change as for all of those made before it gets to run.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message_pump import MessagePump


class CatchUp:
    """A registry listener that runs ``action`` once, on ``owner``'s message queue, for every
    change made before it runs."""

    def __init__(self, owner: MessagePump, action: Callable[[], object]) -> None:
        self._owner = owner
        self._action = action
        self._due = False

    def __call__(self, _server: str) -> None:
        if not self._due:
            self._due = True
            self._owner.call_later(self._run)

    def _run(self) -> None:
        self._due = False
        self._action()
