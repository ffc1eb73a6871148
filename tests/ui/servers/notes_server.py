"""A small stdio MCP server for the UI tests: a note book with a handful of tools.

``--gate PATH`` makes it wait until PATH exists before it answers anything, so a test decides
exactly when this "slow server" connects. ``--extra N`` adds N filler tools (a big server);
``--slow`` adds ``wait``, a call that takes as long as asked (to interrupt one).
"""

from __future__ import annotations

import argparse
import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool(description="Add a note to the note book.\nThe note is kept until deleted.")
def add_note(text: str, tag: str = "general") -> str:
    NOTES.append(text)
    return f"added note {len(NOTES)} [{tag}]"


@server.tool(description="List every note in the note book, oldest first.")
def list_notes() -> str:
    return "\n".join(NOTES) or "no notes"


@server.tool(description="Search notes for a word and return the matching notes.")
def search_notes(word: str) -> str:
    return "\n".join(n for n in NOTES if word in n) or "nothing found"


@server.tool(description="Delete a note by its number.")
def delete_note(number: int) -> str:
    raise ValueError(f"note {number} does not exist")


def wait(seconds: float) -> str:
    time.sleep(seconds)
    return f"waited {seconds} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gate")
    parser.add_argument("--extra", type=int, default=0)
    parser.add_argument("--slow", action="store_true")
    args = parser.parse_args()
    if args.slow:
        server.add_tool(wait, name="wait", description="Wait for some seconds.")
    for i in range(args.extra):
        server.add_tool(
            lambda: "filler", name=f"filler_{i:02}", description=f"Filler tool number {i}."
        )
    if args.gate:
        while not os.path.exists(args.gate):
            time.sleep(0.05)
    server.run("stdio")


if __name__ == "__main__":
    main()
