"""A stdio MCP server (lowlevel API) that lists its tools in two pages."""

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

PAGES = {
    None: (["alpha_one", "alpha_two", "alpha_three"], "page-2"),
    "page-2": (["beta_one", "beta_two"], None),
}


async def list_tools(ctx, params):
    cursor = params.cursor if params is not None else None
    names, next_cursor = PAGES[cursor]
    tools = [
        types.Tool(
            name=name,
            description=f"Tool {name} from page {1 if cursor is None else 2}.",
            input_schema={"type": "object", "properties": {}},
        )
        for name in names
    ]
    return types.ListToolsResult(tools=tools, next_cursor=next_cursor)


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(text=f"called {params.name}")])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
