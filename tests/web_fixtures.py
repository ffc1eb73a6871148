"""A local web site for the ``web`` server's tests: pages, redirects (``/bounce?to=URL`` goes
anywhere), errors, slow and huge responses, binary files, and a stand-in for the Brave Search
API. Nothing leaves 127.0.0.1. Fetching it takes ``BASSI_FETCH_ALLOW_PRIVATE=1``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BRAVE_KEY = "test-key"

ARTICLE = """<!doctype html>
<html><head><title>Tide tables</title>
<style>body { color: red }</style><script>var secret = "script text";</script></head>
<body><h1>Tide tables</h1>
<p>High water at <b>06:12</b>, see <a href="/tides/north.html">the north coast</a>.</p>
<ul><li>Spring tides</li><li>Neap tides</li></ul>
<img src="/map.png" alt="map"></body></html>"""

TAG_SOUP = (
    "<ul>"
    + "".join(f'<li><a href="/item/{n}">item <b>{n}</b></a> <i>note</i></li>' for n in range(8000))
    + "</ul>"
).encode()
"""About 400 KB of small elements: slow work for an HTML-to-Markdown converter."""
HUGE_CHUNK = b"<p>" + b"wave " * 2000 + b"</p>\n"
TRICKLE_SECONDS = 10.0
SLOW_SECONDS = 3.0


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        assert isinstance(self.server, _SiteServer)
        self.server.seen.append(self.path)
        url = urlsplit(self.path)
        route = {
            "/article.html": lambda: self._send(200, "text/html; charset=utf-8", ARTICLE.encode()),
            "/long.html": lambda: self._send(
                200, "text/html", ("<p>" + "tide " * 10_000 + "</p>").encode()
            ),
            "/tags.html": lambda: self._send(200, "text/html", TAG_SOUP),
            "/data.json": lambda: self._send(
                200, "application/json", b'{"station": "Harbour", "heights": [1.2, 3.4]}'
            ),
            "/notes.txt": lambda: self._send(200, "text/plain", b"plain <b>notes</b>\n"),
            "/map.png": lambda: self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(500)),
            "/untyped": lambda: self._send(200, None, b"\x00\x01\x02binary"),
            "/missing": lambda: self._send(404, "text/html", b"<h1>Not here</h1>"),
            "/broken": lambda: self._send(500, "text/plain", b"oops"),
            "/redirect": lambda: self._redirect(302, "/hop"),
            "/hop": lambda: self._redirect(301, "/article.html"),
            "/loop": lambda: self._redirect(302, "/loop"),
            "/to-ftp": lambda: self._redirect(302, "ftp://127.0.0.1/file"),
            "/bounce": lambda: self._redirect(302, parse_qs(url.query)["to"][0]),
            "/slow": self._slow,
            "/trickle": self._trickle,
            "/huge": self._huge,
            "/brave/search": lambda: self._brave(parse_qs(url.query)),
        }.get(url.path)
        if route is None:
            self._send(404, "text/plain", b"no such page")
        else:
            route()

    def _send(self, status: int, content_type: str | None, body: bytes) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, status: int, location: str) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _slow(self) -> None:
        time.sleep(SLOW_SECONDS)
        self._send(200, "text/plain", b"finally")

    def _trickle(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        deadline = time.monotonic() + TRICKLE_SECONDS
        try:
            while time.monotonic() < deadline:
                self.wfile.write(b".")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            return

    def _huge(self) -> None:
        """50 MB of HTML with no length announced: only a reader that stops on its own ends
        this quickly; the write fails once it hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        try:
            for _ in range(50_000_000 // len(HUGE_CHUNK)):
                self.wfile.write(HUGE_CHUNK)
        except OSError:
            return

    def _brave(self, query: dict[str, list[str]]) -> None:
        if self.headers.get("X-Subscription-Token") != BRAVE_KEY:
            self._send(401, "application/json", b'{"error": "bad key"}')
            return
        q = query.get("q", [""])[0]
        count = int(query.get("count", ["20"])[0])
        results = [
            {
                "title": f"<strong>{q}</strong> result {n}",
                "url": f"https://example.org/{n}",
                "description": f"About <strong>{q}</strong> &amp; more, part {n}.",
            }
            for n in range(1, 31)
        ]
        body = json.dumps({"web": {"results": results[:count]}}).encode()
        self._send(200, "application/json", body)


class _SiteServer(ThreadingHTTPServer):
    seen: list[str]
    """The paths requested, in order."""


@dataclass(frozen=True)
class LocalSite:
    base: str
    """``http://127.0.0.1:<port>``."""
    port: int
    seen: list[str]
    """Every path requested so far: whether a request reached the site at all."""


@contextmanager
def local_site() -> Iterator[LocalSite]:
    """Serve the site on a free port of 127.0.0.1."""
    server = _SiteServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, name="web-fixture", daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        yield LocalSite(f"http://127.0.0.1:{port}", port, server.seen)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
