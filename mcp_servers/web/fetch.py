"""Fetching one web page as text the model can read: HTML becomes Markdown, other text types
come back as they are, binary bodies are refused before they are downloaded. Only public
addresses are fetched unless the user opts in (``addresses.py``); redirects are followed here,
hop by hop, so each one is checked and a refusal names the hop."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import html2text
import httpx

from mcp_servers._toolkit import ToolFailure, env_flag, env_number
from mcp_servers.web.addresses import (
    ALLOW_PRIVATE_VARIABLE,
    AddressGuard,
    AddressRefused,
    GuardedTransport,
)

FETCH_TIMEOUT = 30.0
MAX_BYTES = 2_000_000
MAX_REDIRECTS = 5
USER_AGENT = "bassi-web-fetch/0.1 (+https://github.com/bassi)"

_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/sql",
    "application/graphql",
    "application/x-sh",
    "application/x-httpd-php",
    "application/rtf",
}


_PUBLIC_ONLY = (
    "fetch reads public web addresses only, so that a page or a file cannot make it reach "
    "services on this computer or its network. If the user wants local or private addresses "
    f"fetched, they can start bassi with {ALLOW_PRIVATE_VARIABLE}=1."
)


@dataclass(frozen=True)
class FetchLimits:
    timeout: float = FETCH_TIMEOUT
    max_bytes: int = MAX_BYTES
    guard: AddressGuard = field(default_factory=AddressGuard)
    """Which addresses may be connected to."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FetchLimits:
        return cls(
            timeout=env_number(env, "BASSI_FETCH_TIMEOUT", FETCH_TIMEOUT),
            max_bytes=int(env_number(env, "BASSI_FETCH_MAX_BYTES", MAX_BYTES)),
            guard=AddressGuard(allow_private=env_flag(env, ALLOW_PRIVATE_VARIABLE)),
        )


async def fetch_text(url: str, *, max_chars: int, limits: FetchLimits) -> str:
    """The page at ``url`` as Markdown or text, with a header naming the final URL and type.

    Converting HTML is pure Python and takes seconds for a page of megabytes, so it runs in a
    worker thread (the in-process server shares bassi's event loop) and counts towards the
    time limit."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ToolFailure(f"Not a valid URL: {url!r} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ToolFailure(f"Only http:// and https:// URLs can be fetched, not {url!r}")
    try:
        with anyio.fail_after(limits.timeout):
            page = await _download(url, limits)
            return await anyio.to_thread.run_sync(page.render, max_chars, abandon_on_cancel=True)
    except TimeoutError:
        raise ToolFailure(
            f"Timed out after {limits.timeout:g} s fetching {url}; the site is slow or not "
            "answering"
        ) from None
    except httpx.TimeoutException:
        raise ToolFailure(f"Timed out after {limits.timeout:g} s fetching {url}") from None
    except httpx.InvalidURL as exc:
        raise ToolFailure(f"Not a valid URL: {url!r} ({exc})") from None
    except httpx.HTTPError as exc:
        raise ToolFailure(f"Could not fetch {url}: {type(exc).__name__}: {exc}") from None


@dataclass(frozen=True)
class _Page:
    url: str
    content_type: str
    text: str
    is_html: bool
    cut_at_bytes: int | None

    def render(self, max_chars: int) -> str:
        body = _to_markdown(self.text, self.url) if self.is_html else self.text
        notes = []
        if self.cut_at_bytes is not None:
            notes.append(
                f"[The page is larger than {self.cut_at_bytes} bytes; the rest was not read.]"
            )
        if len(body) > max_chars:
            notes.append(
                f"[Cut at {max_chars} of {len(body)} characters; call fetch with a larger "
                "max_chars to read more.]"
            )
            body = body[:max_chars]
        header = f"URL: {self.url}\nContent-Type: {self.content_type or 'unknown'}\n\n"
        return header + body + ("\n\n" + "\n".join(notes) if notes else "")


async def _download(url: str, limits: FetchLimits) -> _Page:
    async with httpx.AsyncClient(
        transport=GuardedTransport(limits.guard),
        timeout=httpx.Timeout(limits.timeout),
        headers={"User-Agent": USER_AGENT},
    ) as client:
        request = client.build_request("GET", url)
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = await client.send(request, stream=True)
            except AddressRefused as exc:
                hop = "" if str(request.url) == url else f" (it redirected to {request.url})"
                raise ToolFailure(f"Refused to fetch {url}{hop}: {exc}. {_PUBLIC_ONLY}") from None
            try:
                if response.next_request is None:
                    return await _read(response, limits)
                request = response.next_request
            finally:
                await response.aclose()
            if request.url.scheme not in ("http", "https"):
                raise ToolFailure(f"{url} redirected to a URL that is not http(s): {request.url}")
        raise ToolFailure(f"More than {MAX_REDIRECTS} redirects fetching {url}")


async def _read(response: httpx.Response, limits: FetchLimits) -> _Page:
    if response.status_code >= 400:
        reason = response.reason_phrase or "error"
        raise ToolFailure(f"HTTP {response.status_code} {reason} for {response.url}")
    content_type = response.headers.get("content-type", "")
    media_type = content_type.partition(";")[0].strip().lower()
    if media_type and not _is_text(media_type):
        size = response.headers.get("content-length")
        raise ToolFailure(
            f"{response.url} is {media_type}{f' ({size} bytes)' if size else ''}, not text; "
            "fetch only returns web pages and text (HTML, plain text, JSON, XML, ...)"
        )
    body = bytearray()
    cut_at: int | None = None
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limits.max_bytes:
            del body[limits.max_bytes :]
            cut_at = limits.max_bytes
            break
    if not media_type and b"\x00" in body[:4096]:
        raise ToolFailure(f"{response.url} has no content type and looks binary; not fetched")
    text = _decode(bytes(body), response.charset_encoding)
    is_html = media_type in _HTML_TYPES or (
        not media_type and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    )
    return _Page(str(response.url), content_type, text, is_html, cut_at)


def _is_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _HTML_TYPES
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _to_markdown(html: str, base_url: str, *, emphasis: bool = True) -> str:
    converter = html2text.HTML2Text(baseurl=base_url, bodywidth=0)
    converter.ignore_images = True
    converter.ignore_emphasis = not emphasis
    return re.sub(r"\n{3,}", "\n\n", converter.handle(html)).strip()


def html_fragment_to_text(fragment: str) -> str:
    """Search snippets arrive with inline markup (``<strong>`` around the query words) and
    entities; the model needs only their text."""
    return _to_markdown(fragment, "", emphasis=False).replace("\n", " ")
