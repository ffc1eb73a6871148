"""A well-behaved stdio MCP server. ``--banner`` first prints a line that is not JSON-RPC,
as servers with a stray ``print`` do; bassi must still connect. ``--started-log PATH``
appends a line to PATH each time the server starts; ``--started-in PATH`` writes the
scheduling group its code began in."""

import os
import sys
import time
from pathlib import Path

STARTED_IN = (
    Path("/proc/self/autogroup").read_text().strip()
    if Path("/proc/self/autogroup").exists()
    else "no autogroups"
)
"""The scheduling group the server's code began in, read before anything else ran."""

from mcp.server.mcpserver import MCPServer  # noqa: E402 (after reading the priority)

server = MCPServer("good")


@server.tool(description="Echo the given text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.\nReturns their sum.")
def add(a: int, b: int = 2) -> int:
    return a + b


@server.tool(description="Always fails with an error result.")
def fail() -> str:
    raise ValueError("this tool always fails")


@server.tool(description="Report an environment variable and the working directory.")
def where(variable: str) -> str:
    return f"{variable}={os.environ.get(variable, '<unset>')} cwd={os.getcwd()}"


@server.tool(description="Sleep, then answer: for call timeouts.")
def sleep(seconds: float) -> str:
    time.sleep(seconds)
    return f"slept {seconds} s"


if __name__ == "__main__":
    if "--started-log" in sys.argv:
        with open(sys.argv[sys.argv.index("--started-log") + 1], "a") as log:
            log.write("started\n")
    if "--started-in" in sys.argv:
        Path(sys.argv[sys.argv.index("--started-in") + 1]).write_text(STARTED_IN)
    if "--banner" in sys.argv:
        print("Good server v1 starting (this line is not JSON-RPC)", flush=True)
    server.run("stdio")
