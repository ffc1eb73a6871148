"""A stdio MCP server whose tools are whatever a JSON file says, and which leaves a trace.

Usage: ``scripted_tools_server.py TOOLS_JSON TRACE_FILE``. On start it appends ``started``
to TRACE_FILE, before anything else: a test that finds no such line knows the command never
ran. It lists the tools of TOOLS_JSON (a list of MCP tools in their JSON shape), read anew
at each listing so a test can change a definition between connections, and answers a call
with the tool's name, appending ``called <name> <arguments as JSON>`` to TRACE_FILE.
"""

import json
import sys

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS, TRACE = anyio.Path(sys.argv[1]), anyio.Path(sys.argv[2])


async def trace(line: str) -> None:
    async with await TRACE.open("a", encoding="utf-8") as handle:
        await handle.write(line + "\n")


async def list_tools(ctx, params):
    tools = json.loads(await TOOLS.read_text(encoding="utf-8"))
    return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])


async def call_tool(ctx, params):
    await trace(f"called {params.name} {json.dumps(params.arguments or {}, sort_keys=True)}")
    return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])


server = Server("scripted", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    await trace("started")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
