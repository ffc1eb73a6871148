"""The ``web`` server: ``search`` the web and ``fetch`` a page as readable text."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from mcp_servers._toolkit import ServerDefinition, ToolArgs, ToolOutput, ToolSpec, text_result
from mcp_servers.web.fetch import FetchLimits, fetch_text
from mcp_servers.web.search import backend_from_env, format_hits

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS = 200_000
DEFAULT_RESULTS = 5
MAX_RESULTS = 20


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, description="What to search for, as you would type it.")
    max_results: int = Field(
        default=DEFAULT_RESULTS, ge=1, le=MAX_RESULTS, description="How many results to return."
    )


class FetchArgs(ToolArgs):
    url: str = Field(min_length=1, description="The http:// or https:// address to read.")
    max_chars: int = Field(
        default=DEFAULT_MAX_CHARS,
        ge=1,
        le=MAX_CHARS,
        description="Return at most this many characters of the page.",
    )


def define_server(project_dir: Path, *, env: Mapping[str, str] | None = None) -> ServerDefinition:
    """``project_dir`` is unused: the web tools do not touch files. The factory takes it so
    every shipped server is built the same way."""
    backend = backend_from_env(env)
    limits = FetchLimits.from_env(env)

    async def search(args: SearchArgs) -> ToolOutput:
        hits = await backend.search(args.query, args.max_results)
        return text_result(format_hits(args.query, hits, backend))

    async def fetch(args: FetchArgs) -> ToolOutput:
        return text_result(await fetch_text(args.url, max_chars=args.max_chars, limits=limits))

    read_only_web = {"readOnlyHint": True, "openWorldHint": True}
    tools: list[ToolSpec[Any]] = [
        ToolSpec(
            name="search",
            description=(
                "Search the web and get a list of results, each with title, URL and snippet. "
                "Use it for current events, documentation, prices, or any page whose address "
                "you do not know; then read the promising results with `fetch`. "
                f"Backend: {backend.label}."
            ),
            args=SearchArgs,
            handler=search,
            annotations={"title": "Search the web", **read_only_web},
        ),
        ToolSpec(
            name="fetch",
            description=(
                "Download one web page (http or https URL) and return it as readable Markdown; "
                "JSON, XML and plain-text responses come back as text. Use it to read a page "
                "whose URL you have, e.g. from `search` or from the user. Images, PDFs and "
                "other binary files are refused. Redirects are followed; pages larger than "
                f"{limits.max_bytes} bytes are cut, and the request gives up after "
                f"{limits.timeout:g} s."
                + (
                    ""
                    if limits.guard.allow_private
                    else " Only public internet addresses are fetched: localhost, private "
                    "networks and cloud metadata addresses are refused."
                )
            ),
            args=FetchArgs,
            handler=fetch,
            annotations={"title": "Read a web page", **read_only_web},
        ),
    ]
    return ServerDefinition("web", "Searches the web and reads web pages as text.", tools)
