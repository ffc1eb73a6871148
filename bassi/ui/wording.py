"""Wording shared by the blocks of the chat log."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: "1 tool", "6 tools", "44 more lines"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
