"""Write one corpus file (the shape of ``../shared/bench/corpus``) from a real MCP server.

Starts the server over stdio, pages through ``tools/list`` and writes
``{"server", "package", "tools": [{"name", "description", "inputSchema", "annotations"?}]}``.
Servers that want credentials usually list their tools with a dummy value; pass it with
``--env``. From the repo root:

    .venv/bin/python bench/dump_corpus.py --server todoist --package todoist-mcp@1.3.4 \
        --env TODOIST_API_KEY=x --out bench/corpus/dev/todoist.json -- node_modules/.bin/todoist-mcp
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client


async def dump(command: list[str], env: dict[str, str]) -> list[dict[str, object]]:
    params = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools += page.tools
            if page.next_cursor is None or page.next_cursor == cursor:
                break
            cursor = page.next_cursor
    out = []
    for tool in tools:
        data = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        keys = ("name", "description", "inputSchema", "annotations")
        out.append({k: data[k] for k in keys if k in data})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--package", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    tools = asyncio.run(asyncio.wait_for(dump(args.command, env), args.timeout))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = {"server": args.server, "package": args.package, "tools": tools}
    args.out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.server}: {len(tools)} tools -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
