"""A stdio MCP server with everything besides plain tools: prompts, resources and a resource
template, a tool that asks the user (elicitation), one that reports progress, one that returns
structured content, one with an image, one that waits until it is cancelled, and one that adds
a tool, a prompt and a resource and announces the changes.

Unknown arguments are ignored (a test passes a secret-looking one). ``--modern`` serves
only the 2026-07-28 revision (it refuses ``initialize``), as a server
written for that revision would. ``--record PATH`` appends what happened to PATH (the tests
read it: a cancellation, for one)."""

from __future__ import annotations

import argparse
import base64
from pathlib import Path

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.stdio import stdio_server
from pydantic import BaseModel

server = MCPServer("features")
RECORD: Path | None = None
MODERN = False
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 92).decode()


def record(line: str) -> None:
    if RECORD is not None:
        with RECORD.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class Traveller(BaseModel):
    name: str
    nights: int = 1


QUESTION = "Who is travelling, and for how many nights?"


@server.tool(description="Book a room: asks the user who travels and for how many nights.")
async def book_room(ctx: Context) -> str | types.InputRequiredResult:
    if MODERN:
        # 2026-07-28 has no server-to-client requests: the tool answers "input required",
        # and the client calls again with the person's answer.
        answers = ctx.input_responses or {}
        if "who" not in answers:
            schema = Traveller.model_json_schema()
            ask = types.ElicitRequestFormParams(message=QUESTION, requested_schema=schema)
            return types.InputRequiredResult(
                input_requests={"who": types.ElicitRequest(params=ask)}, request_state="who"
            )
        result = types.ElicitResult.model_validate(answers["who"], from_attributes=True)
        if result.action == "accept" and result.content:
            return f"booked {result.content['nights']} night(s) for {result.content['name']}"
        return f"not booked: the user chose {result.action}"
    answer = await ctx.elicit(QUESTION, Traveller)
    if answer.action == "accept":
        return f"booked {answer.data.nights} night(s) for {answer.data.name}"
    return f"not booked: the user chose {answer.action}"


@server.tool(description="Count to n slowly, reporting progress at each step.")
async def count_slowly(ctx: Context, n: int = 3, pause: float = 0.3) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"counted {i} of {n}")
        await anyio.sleep(pause)
    return f"counted to {n}"


@server.tool(description="Weather readings as structured content.")
def readings() -> types.CallToolResult:
    rows = [{"city": "Oslo", "celsius": 4}, {"city": "Rome", "celsius": 19}]
    return types.CallToolResult(
        content=[types.TextContent(text="2 readings")],
        structured_content={"readings": rows},
    )


@server.tool(description="A small picture.")
def picture() -> types.CallToolResult:
    return types.CallToolResult(
        content=[
            types.TextContent(text="here is the picture"),
            types.ImageContent(data=PIXEL, mime_type="image/png"),
        ]
    )


@server.tool(description="Wait until cancelled (or 60 s).")
async def wait_forever() -> str:
    record("waiting")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        record("cancelled")
        raise
    return "waited 60 s"


@server.tool(description="Add a tool, a prompt and a resource, and announce the changes.")
async def grow(ctx: Context) -> str:
    server.add_tool(lambda: "new", name="fresh_tool", description="A tool added later.")
    server.add_prompt(Prompt.from_function(lambda: "Fresh prompt text", name="fresh_prompt"))
    server.add_resource(
        FunctionResource.from_function(lambda: "fresh", "notes://fresh", name="fresh")
    )
    if MODERN:
        # 2026-07-28: changes go to ``subscriptions/listen`` streams.
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
        await ctx.notify_resources_changed()
    else:
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_prompt_list_changed()
        await ctx.session.send_resource_list_changed()
    return "grown"


@server.prompt(description="Write a greeting for someone.")
def greet(name: str, style: str = "warm") -> str:
    return f"Write a {style} greeting for {name}."


@server.prompt(description="Review a piece of code.")
def review() -> list[dict[str, str]]:
    return [
        {"role": "user", "content": "Review this code."},
        {"role": "assistant", "content": "Which file?"},
    ]


@server.resource("notes://today", description="Today's note.")
def today() -> str:
    return "Buy milk. Call Ann."


@server.resource("notes://day/{day}", description="The note of a given day.")
def day_note(day: str) -> str:
    return f"Note of {day}: nothing planned."


async def serve_modern() -> None:
    from mcp.server.runner import _serve_modern_stream

    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await _serve_modern_stream(
            lowlevel, read, write, lifespan_state=state, raise_exceptions=False
        )


def main() -> None:
    global MODERN, RECORD
    parser = argparse.ArgumentParser()
    parser.add_argument("--modern", action="store_true")
    parser.add_argument("--record")
    args, _ = parser.parse_known_args()
    RECORD = Path(args.record) if args.record else None
    MODERN = args.modern
    if args.modern:
        anyio.run(serve_modern)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
