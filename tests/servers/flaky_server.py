"""Fails its first start (exit code 1, a transient-looking error on stderr) and works from
the second: the count of starts is kept in the file given as the first argument."""

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

counter = Path(sys.argv[1])
starts = int(counter.read_text() or "0") + 1 if counter.exists() else 1
counter.write_text(str(starts))
if starts == 1:
    print(
        "error: address already in use (the previous instance is still shutting down)",
        file=sys.stderr,
        flush=True,
    )
    sys.exit(1)

server = MCPServer("flaky")


@server.tool(description="Say which start this is.")
def which_start() -> str:
    return f"start {starts}"


server.run("stdio")
