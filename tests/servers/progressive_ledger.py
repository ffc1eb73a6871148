"""A stdio MCP server for the progressive-disclosure tests: a bookkeeping ledger whose calls
leave a trace in the file named by ``LEDGER_FILE``, so a test can tell whether a tool really ran
in this process (one run per server, calls forwarded by bassi)."""

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("ledger")
LEDGER = Path(os.environ.get("LEDGER_FILE", "ledger.txt"))


def _write(line: str) -> None:
    with LEDGER.open("a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} {line}\n")


@server.tool(description="Record an expense entry in the bookkeeping ledger.")
def record_expense(amount: float, note: str) -> str:
    _write(f"expense {amount} {note}")
    return f"recorded expense {amount} ({note})"


@server.tool(description="Read back every entry of the bookkeeping ledger.")
def read_ledger() -> str:
    text = LEDGER.read_text(encoding="utf-8") if LEDGER.exists() else "(empty)"
    _write("read")
    return text


@server.tool(description="Audit the ledger entries for mistakes.")
def audit_ledger() -> str:
    _write("audit")
    return "audit passed"


@server.tool(description="Sum of all expenses recorded in the bookkeeping ledger.")
def ledger_total() -> str:
    _write("total")
    return "total computed"


@server.tool(description="Close the ledger books for the year (the process dies mid-call).")
def close_books() -> str:
    _write("closing")
    sys.stderr.write("ledger: books on fire, exiting\n")
    sys.stderr.flush()
    os._exit(9)


if __name__ == "__main__":
    server.run("stdio")
