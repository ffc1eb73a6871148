"""The shipped ``web`` server, over stdio and in process, against a local web site."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path
from urllib.parse import quote

import pytest
import pytest_asyncio
from mcp import Client

from mcp_servers._toolkit import ToolFailure
from mcp_servers.web.addresses import AddressGuard, IPAddress
from mcp_servers.web.fetch import FetchLimits, fetch_text
from tests.conftest import HANG_SECONDS
from tests.mcp_servers_support import TRANSPORTS, call, connect, held_open
from tests.web_fixtures import BRAVE_KEY, LocalSite, local_site

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALLOW_PRIVATE = "BASSI_FETCH_ALLOW_PRIVATE"
"""The local test site is refused without it: most tests opt in, the guard's tests do not."""


@pytest.fixture(scope="module")
def local() -> Iterator[LocalSite]:
    with local_site() as site:
        yield site


@pytest.fixture(scope="module")
def site(local: LocalSite) -> str:
    return local.base


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("project")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=TRANSPORTS)
async def client(request: pytest.FixtureRequest, site: str, project: Path) -> AsyncIterator[Client]:
    env = {
        ALLOW_PRIVATE: "1",
        "BASSI_FETCH_TIMEOUT": "1",
        "BASSI_FETCH_MAX_BYTES": "100000",
        "BRAVE_API_KEY": BRAVE_KEY,
        "BASSI_BRAVE_SEARCH_URL": f"{site}/brave/search",
    }
    async with held_open(lambda: connect("web", request.param, project, env)) as client:
        yield client


async def fetch(client: Client, url: str, **extra: object) -> tuple[bool, str]:
    return await call(client, "fetch", {"url": url, **extra})


async def test_html_comes_back_as_markdown(client: Client, site: str) -> None:
    is_error, text = await fetch(client, f"{site}/article.html")
    assert not is_error
    header, body = text.split("\n\n", 1)
    assert header == f"URL: {site}/article.html\nContent-Type: text/html; charset=utf-8"
    assert body.startswith("# Tide tables\n\nHigh water at **06:12**")
    assert f"[the north coast]({site}/tides/north.html)" in body
    assert "* Spring tides\n  * Neap tides" in body
    assert "script text" not in body
    assert "color: red" not in body
    assert "map.png" not in body


async def test_redirects_are_followed(client: Client, site: str) -> None:
    is_error, text = await fetch(client, f"{site}/redirect")
    assert not is_error
    assert text.startswith(f"URL: {site}/article.html\n")
    assert "# Tide tables" in text


async def test_a_redirect_loop_ends_with_an_error(client: Client, site: str) -> None:
    is_error, text = await fetch(client, f"{site}/loop")
    assert is_error
    assert text == f"More than 5 redirects fetching {site}/loop"


async def test_a_redirect_off_the_web_is_refused(client: Client, site: str) -> None:
    is_error, text = await fetch(client, f"{site}/to-ftp")
    assert is_error
    assert text.startswith(f"{site}/to-ftp redirected to a URL that is not http(s)")


@pytest.mark.parametrize(("path", "status"), [("/missing", "404 Not Found"), ("/broken", "500")])
async def test_http_errors_are_reported(client: Client, site: str, path: str, status: str) -> None:
    is_error, text = await fetch(client, f"{site}{path}")
    assert is_error
    assert text.startswith(f"HTTP {status}")
    assert text.endswith(f"for {site}{path}")


@pytest.mark.parametrize("path", ["/slow", "/trickle"])
async def test_a_slow_page_times_out(client: Client, site: str, path: str) -> None:
    started = time.monotonic()
    is_error, text = await fetch(client, f"{site}{path}")
    assert time.monotonic() - started < HANG_SECONDS
    assert is_error
    assert text.startswith(f"Timed out after 1 s fetching {site}{path}")


async def test_a_huge_page_is_read_only_up_to_the_byte_limit(client: Client, site: str) -> None:
    started = time.monotonic()
    is_error, text = await fetch(client, f"{site}/huge", max_chars=200_000)
    assert time.monotonic() - started < HANG_SECONDS
    assert not is_error
    assert text.startswith(f"URL: {site}/huge\n")
    assert text.endswith("[The page is larger than 100000 bytes; the rest was not read.]")
    # 100000 bytes of "<p>wave wave ...": about 20000 words, and not one more.
    assert 19_000 < text.count("wave") <= 20_000


async def test_long_text_is_cut_at_max_chars(client: Client, site: str) -> None:
    is_error, text = await fetch(client, f"{site}/long.html", max_chars=1000)
    assert not is_error
    body = text.split("\n\n", 1)[1]
    assert body.startswith("tide tide")
    assert body.endswith(
        "[Cut at 1000 of 49999 characters; call fetch with a larger max_chars to read more.]"
    )
    assert len(body) < 1000 + 100


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("/data.json", '{"station": "Harbour", "heights": [1.2, 3.4]}'),
        ("/notes.txt", "plain <b>notes</b>\n"),
    ],
)
async def test_non_html_text_comes_back_as_is(
    client: Client, site: str, path: str, content: str
) -> None:
    is_error, text = await fetch(client, f"{site}{path}")
    assert not is_error
    assert text.split("\n\n", 1)[1] == content


@pytest.mark.parametrize(
    ("path", "complaint"),
    [
        ("/map.png", "is image/png (508 bytes), not text"),
        ("/untyped", "has no content type and looks binary"),
    ],
)
async def test_binary_bodies_are_refused(
    client: Client, site: str, path: str, complaint: str
) -> None:
    is_error, text = await fetch(client, f"{site}{path}")
    assert is_error
    assert text.startswith(f"{site}{path} {complaint}")


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"url": "file:///etc/passwd"}, "Only http:// and https:// URLs can be fetched"),
        ({"url": "example.org/page"}, "Only http:// and https:// URLs can be fetched"),
        ({"url": "http://127.0.0.1:1/"}, "Could not fetch http://127.0.0.1:1/: ConnectError"),
        ({}, "Invalid arguments for fetch: url: Field required"),
        ({"url": "http://x", "max_chars": 0}, "max_chars: Input should be greater than or equal"),
        ({"url": "http://x", "timeout": 5}, "timeout: Extra inputs are not permitted"),
    ],
)
async def test_bad_fetch_requests_are_error_results(
    client: Client, arguments: dict[str, object], complaint: str
) -> None:
    is_error, text = await call(client, "fetch", arguments)
    assert is_error
    assert complaint in text


async def test_search_through_the_keyed_backend(client: Client) -> None:
    is_error, text = await call(client, "search", {"query": "tides", "max_results": 2})
    assert not is_error
    assert text == (
        "Results for 'tides' (Brave Search API):\n\n"
        "1. tides result 1\n   https://example.org/1\n   About tides & more, part 1.\n\n"
        "2. tides result 2\n   https://example.org/2\n   About tides & more, part 2."
    )


async def test_search_returns_five_results_by_default(client: Client) -> None:
    is_error, text = await call(client, "search", {"query": "tides"})
    assert not is_error
    assert "5. tides result 5" in text
    assert "6. " not in text


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"query": ""}, "query: String should have at least 1 character"),
        (
            {"query": "x", "max_results": 21},
            "max_results: Input should be less than or equal to 20",
        ),
    ],
)
async def test_bad_search_requests_are_error_results(
    client: Client, arguments: dict[str, object], complaint: str
) -> None:
    is_error, text = await call(client, "search", arguments)
    assert is_error
    assert text == f"Invalid arguments for search: {complaint}"


async def test_a_wrong_api_key_is_reported(site: str, project: Path) -> None:
    env = {"BRAVE_API_KEY": "wrong", "BASSI_BRAVE_SEARCH_URL": f"{site}/brave/search"}
    async with connect("web", "memory", project, env) as client:
        is_error, text = await call(client, "search", {"query": "tides"})
    assert is_error
    assert text == "Brave Search refused the API key (HTTP 401); check BRAVE_API_KEY"


async def test_the_brave_backend_without_a_key_says_what_is_missing(project: Path) -> None:
    env = {"BASSI_SEARCH_BACKEND": "brave", "BRAVE_API_KEY": ""}
    async with connect("web", "memory", project, env) as client:
        is_error, text = await call(client, "search", {"query": "tides"})
    assert is_error
    assert text == "BASSI_SEARCH_BACKEND=brave needs BRAVE_API_KEY to be set"


async def test_the_keyless_default_reports_an_unreachable_network(project: Path) -> None:
    """Without BRAVE_API_KEY the server searches through ddgs. Its traffic goes to a closed
    local port here (``DDGS_PROXY``), standing in for a machine that is offline."""
    env = {"BRAVE_API_KEY": "", "DDGS_PROXY": "http://127.0.0.1:9"}
    async with connect("web", "memory", project, env) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        is_error, text = await call(client, "search", {"query": "tides"})
    assert "Backend: ddgs" in (tools["search"].description or "")
    assert is_error
    assert text.startswith("Web search failed: ")
    assert "Connection refused" in text


async def test_converting_a_big_page_does_not_stall_the_event_loop(
    site: str, project: Path
) -> None:
    """In process the server shares bassi's event loop, so the UI must keep running while
    a big page becomes Markdown."""
    env = {ALLOW_PRIVATE: "1", "BASSI_FETCH_TIMEOUT": "60"}
    longest_gap = 0.0

    async def heartbeat() -> None:
        nonlocal longest_gap
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            longest_gap = max(longest_gap, now - last)
            last = now

    async with connect("web", "memory", project, env) as client:
        beating = asyncio.create_task(heartbeat())
        started = time.monotonic()
        is_error, text = await fetch(client, f"{site}/tags.html", max_chars=200_000)
        elapsed = time.monotonic() - started
        beating.cancel()
    assert not is_error
    assert f"* [item **1000**]({site}/item/1000) _note_\n" in text
    assert elapsed > 0.3, "the page converted too fast to tell anything"
    # Converted on the event loop, the loop would stand still for about all of it; a busy
    # machine stretches both alike.
    assert longest_gap < elapsed / 2


# Only public addresses, unless the user opts in


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=TRANSPORTS)
async def guarded(request: pytest.FixtureRequest, project: Path) -> AsyncIterator[Client]:
    """The web server as it starts by default: local and private addresses refused."""
    env = {ALLOW_PRIVATE: ""}
    async with held_open(lambda: connect("web", request.param, project, env)) as client:
        yield client


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "127.0.0.1 is a loopback address (this computer)"),
        ("2130706433", "2130706433 resolves to 127.0.0.1, a loopback address"),
        ("0x7f000001", "0x7f000001 resolves to 127.0.0.1, a loopback address"),
        ("0x7f.1", "0x7f.1 resolves to 127.0.0.1, a loopback address"),
        ("017700000001", "017700000001 resolves to 127.0.0.1, a loopback address"),
        ("127.1", "127.1 resolves to 127.0.0.1, a loopback address"),
        ("localhost", "a loopback address (this computer)"),
        ("[::1]", "::1 is a loopback address"),
        ("[::ffff:127.0.0.1]", "an IPv6 form of 127.0.0.1, a loopback address"),
        ("[64:ff9b::7f00:1]", "an IPv6 form of 127.0.0.1, a loopback address"),
        ("[2002:7f00:1::]", "an IPv6 form of 127.0.0.1, a loopback address"),
        ("0.0.0.0", "the unspecified address (this computer)"),
    ],
)
async def test_this_computer_is_refused_in_every_spelling(
    guarded: Client, local: LocalSite, host: str, reason: str
) -> None:
    probe = f"/article.html?probe={host}"
    url = f"http://{host}:{local.port}{probe}"
    is_error, text = await fetch(guarded, url)
    assert is_error
    assert text.startswith(f"Refused to fetch {url}: ")
    assert reason in text
    assert f"start bassi with {ALLOW_PRIVATE}=1" in text
    assert probe not in local.seen


async def test_a_dotted_octal_address_is_not_even_a_url(guarded: Client, local: LocalSite) -> None:
    url = f"http://0177.0.0.1:{local.port}/article.html?probe=octal"
    is_error, text = await fetch(guarded, url)
    assert is_error
    assert text.startswith(f"Not a valid URL: {url!r}")
    assert "/article.html?probe=octal" not in local.seen


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.1.2.3/", "a private network address"),
        ("http://192.168.0.1:8080/admin", "a private network address"),
        ("http://169.254.169.254/latest/meta-data/", "a cloud metadata service address"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "a cloud metadata service address"),
        ("http://[fe80::1]/", "a link-local address"),
        ("http://100.64.0.1/", "not a public internet address"),
    ],
)
async def test_private_networks_and_metadata_services_are_refused(
    guarded: Client, url: str, reason: str
) -> None:
    is_error, text = await fetch(guarded, url)
    assert is_error
    assert text.startswith(f"Refused to fetch {url}: ")
    assert reason in text


async def test_the_tool_description_says_only_public_addresses_are_fetched(
    guarded: Client, client: Client
) -> None:
    def description(of: Client) -> Awaitable[str]:
        async def read() -> str:
            tools = (await of.list_tools()).tools
            return next(t.description or "" for t in tools if t.name == "fetch")

        return read()

    assert "Only public internet addresses are fetched" in await description(guarded)
    assert "Only public internet addresses" not in await description(client)


@dataclass(frozen=True)
class OnePublicSite(AddressGuard):
    """Stands the local site on ``port`` in for a public web server (keeping all traffic on
    127.0.0.1); every other address is judged as usual."""

    port: int = 0

    def refusal(self, address: IPAddress, port: int) -> str | None:
        if (address, port) == (IPv4Address("127.0.0.1"), self.port):
            return None
        return super().refusal(address, port)


@dataclass(frozen=True)
class Answering(OnePublicSite):
    """Also answers every host name with ``answers``, as a DNS server of the page's author
    could."""

    answers: tuple[IPAddress, ...] = ()

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        return list(self.answers)


@pytest.fixture(scope="module")
def internal() -> Iterator[LocalSite]:
    """A second local site: the service on the user's computer a redirect aims at."""
    with local_site() as site:
        yield site


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "2130706433", "[::ffff:127.0.0.1]", "[::1]"]
)
async def test_a_public_page_cannot_redirect_into_this_computer(
    local: LocalSite, internal: LocalSite, host: str
) -> None:
    path = f"/article.html?from={host}"
    target = f"http://{host}:{internal.port}{path}"
    url = f"{local.base}/bounce?to={quote(target, safe='')}"
    limits = FetchLimits(guard=OnePublicSite(port=local.port))
    with pytest.raises(ToolFailure) as refused:
        await fetch_text(url, max_chars=1000, limits=limits)
    message = str(refused.value)
    assert message.startswith(f"Refused to fetch {url} (it redirected to {target}): ")
    assert "a loopback address" in message
    assert f"start bassi with {ALLOW_PRIVATE}=1" in message
    assert path not in internal.seen
    # The user who opted in gets the page: only the guard stood in the way.
    if host != "[::1]":  # the test site listens on IPv4 only
        page = await fetch_text(url, max_chars=1000, limits=FetchLimits(guard=AddressGuard(True)))
        assert "# Tide tables" in page


async def test_one_private_answer_among_public_ones_is_refused(local: LocalSite) -> None:
    """If only the first answer were checked, this would connect to the stand-in site."""
    guard = Answering(port=local.port, answers=(IPv4Address("127.0.0.1"), IPv4Address("10.0.0.8")))
    url = f"http://pages.example:{local.port}/article.html?mixed"
    with pytest.raises(ToolFailure) as refused:
        await fetch_text(url, max_chars=1000, limits=FetchLimits(guard=guard))
    assert "pages.example resolves to 10.0.0.8, a private network address" in str(refused.value)
    assert "/article.html?mixed" not in local.seen


async def test_the_checked_address_is_the_one_connected_to(local: LocalSite) -> None:
    """The name is resolved once, by the guard, and the connection goes to that address: a
    second lookup (which would fail for this made-up name) never happens."""
    guard = Answering(port=local.port, answers=(IPv4Address("127.0.0.1"),))
    url = f"http://pages.example:{local.port}/article.html?resolved-once"
    page = await fetch_text(url, max_chars=1000, limits=FetchLimits(guard=guard))
    assert page.startswith(f"URL: {url}\n")
    assert "/article.html?resolved-once" in local.seen
