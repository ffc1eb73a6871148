"""A stdio MCP server whose ``crash`` tool kills the process in the middle of the call."""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("crashy")


@server.tool(description="Echo the given text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Crash the server while answering.")
def crash() -> str:
    sys.stderr.write("crash_server: out of cheese, giving up\n")
    sys.stderr.flush()
    os._exit(7)


if __name__ == "__main__":
    server.run("stdio")
