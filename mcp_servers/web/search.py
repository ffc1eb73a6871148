"""Web search backends. The default needs no account (``ddgs``, a metasearch library); setting
``BRAVE_API_KEY`` switches to the Brave Search API, which is steadier for heavy use.

``BASSI_SEARCH_BACKEND`` (``auto``, ``ddgs`` or ``brave``) forces a choice, and
``BASSI_BRAVE_SEARCH_URL`` points the Brave backend at another endpoint (a proxy, or a local
server in tests); ``DDGS_PROXY`` sends the ddgs backend's traffic through a proxy.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx

from mcp_servers._toolkit import ToolFailure, env_number
from mcp_servers.web.fetch import USER_AGENT, html_fragment_to_text

logger = logging.getLogger(__name__)

BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"
SEARCH_TIMEOUT = 20.0


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    @property
    def label(self) -> str: ...

    async def search(self, query: str, max_results: int) -> list[SearchHit]: ...


@dataclass(frozen=True)
class DdgsBackend:
    timeout: float
    proxy: str | None = None
    label: str = "ddgs (DuckDuckGo and other engines, no API key)"

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException

        def run() -> list[dict[str, Any]]:
            results: list[dict[str, Any]] = DDGS(proxy=self.proxy, timeout=int(self.timeout)).text(
                query, max_results=max_results
            )
            return results

        try:
            with anyio.fail_after(self.timeout + 5):
                rows = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolFailure(f"Web search timed out after {self.timeout:g} s") from None
        except DDGSException as exc:
            if "no results" in str(exc).lower():
                return []
            raise ToolFailure(f"Web search failed: {exc}") from None
        return [
            SearchHit(str(r.get("title", "")), str(r.get("href", "")), str(r.get("body", "")))
            for r in rows[:max_results]
        ]


@dataclass(frozen=True)
class BraveBackend:
    api_key: str
    url: str
    timeout: float
    label: str = "Brave Search API"

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        if not self.api_key:
            raise ToolFailure("BASSI_SEARCH_BACKEND=brave needs BRAVE_API_KEY to be set")
        headers = {
            "Accept": "application/json",
            "X-Subscription-Token": self.api_key,
            "User-Agent": USER_AGENT,
        }
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.get(
                    self.url, params={"q": query, "count": max_results}, headers=headers
                )
        except httpx.TimeoutException:
            raise ToolFailure(f"Brave Search timed out after {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise ToolFailure(f"Could not reach Brave Search: {exc}") from None
        if response.status_code in (401, 403):
            raise ToolFailure(
                f"Brave Search refused the API key (HTTP {response.status_code}); "
                "check BRAVE_API_KEY"
            )
        if response.status_code == 429:
            raise ToolFailure("Brave Search rate limit reached (HTTP 429); try again shortly")
        if response.status_code >= 400:
            raise ToolFailure(f"Brave Search answered HTTP {response.status_code}")
        try:
            rows = response.json().get("web", {}).get("results", [])
        except (ValueError, AttributeError):
            raise ToolFailure("Brave Search sent an answer that is not the expected JSON") from None
        return [
            SearchHit(
                html_fragment_to_text(str(r.get("title", ""))),
                str(r.get("url", "")),
                html_fragment_to_text(str(r.get("description", ""))),
            )
            for r in rows[:max_results]
            if isinstance(r, dict)
        ]


def backend_from_env(env: Mapping[str, str] | None = None) -> SearchBackend:
    env = os.environ if env is None else env
    timeout = env_number(env, "BASSI_SEARCH_TIMEOUT", SEARCH_TIMEOUT)
    choice = env.get("BASSI_SEARCH_BACKEND", "auto").strip().lower() or "auto"
    if choice not in ("auto", "ddgs", "brave"):
        logger.warning("unknown BASSI_SEARCH_BACKEND=%r; using auto", choice)
        choice = "auto"
    key = env.get("BRAVE_API_KEY", "").strip()
    if choice == "brave" or (choice == "auto" and key):
        url = env.get("BASSI_BRAVE_SEARCH_URL", "").strip() or BRAVE_SEARCH_URL
        return BraveBackend(api_key=key, url=url, timeout=timeout)
    return DdgsBackend(timeout=timeout, proxy=env.get("DDGS_PROXY") or None)


def format_hits(query: str, hits: list[SearchHit], backend: SearchBackend) -> str:
    if not hits:
        return f"No results for {query!r} ({backend.label})."
    lines = [f"Results for {query!r} ({backend.label}):"]
    for number, hit in enumerate(hits, 1):
        lines += ["", f"{number}. {hit.title or '(no title)'}", f"   {hit.url}"]
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    return "\n".join(lines)
