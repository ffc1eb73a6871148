"""Wording shared by the blocks of the chat log."""

from __future__ import annotations

from bassi.core.registry import ServerStatus

STATUS_STYLE = {
    ServerStatus.CONNECTED: "green",
    ServerStatus.CONNECTING: "yellow",
    ServerStatus.INSTALLING: "yellow",
    ServerStatus.NEEDS_AUTH: "magenta",
    ServerStatus.FAILED: "red",
    ServerStatus.DISABLED: "dim",
}
"""Rich styles of server statuses where a terminal theme's variables are not available (the
shell, DataTable cells). A status without one is shown unstyled."""


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: "1 tool", "6 tools", "44 more lines"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
