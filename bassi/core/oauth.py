"""Signing in to remote MCP servers with OAuth 2.1, using the mcp library's client side.

The library does the protocol: discovery of the protected-resource and authorization-server
metadata, dynamic client registration, PKCE, the token exchange and refreshing. bassi adds
what it leaves to the application:

- where tokens live: one file per server URL in the user's bassi directory
  (``<config_dir>/oauth/``, directory ``0700``, files ``0600``), never in the project, and
  never in a log;
- the browser step: a one-shot HTTP server on 127.0.0.1 receives the redirect, and
  ``open_url`` (the UI's, or the shell's ``webbrowser``) shows the authorization URL;
- the difference between connecting and signing in. Connecting uses stored tokens (refreshed
  when they expired) and never opens a browser: a server that needs a person gets the
  status "needs sign-in" instead. Only an explicit sign-in runs the interactive flow.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import AnyUrl, ValidationError

from bassi import __version__
from bassi.core.connections import SignInRequired
from bassi.core.json_store import write_atomic
from bassi.core.mcp_config import HttpServerConfig

SIGN_IN_TIMEOUT = 300.0
"""Seconds a sign-in waits for the browser to come back."""
CALLBACK_PATH = "/callback"

OpenUrl = Callable[[str], Awaitable[None]]
"""Shows the person the authorization URL (opens a browser, prints it, ...)."""


class SignInError(Exception):
    """A sign-in did not complete; the message says why, for the person."""


def tokens_dir(config_dir: Path) -> Path:
    return config_dir / "oauth"


class TokenStore:
    """The sign-in of one server URL, as the mcp library's ``TokenStorage``."""

    def __init__(self, config_dir: Path, url: str) -> None:
        self.url = url
        key = hashlib.sha256(url.encode()).hexdigest()[:24]
        self.path = tokens_dir(config_dir) / f"{key}.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _write(self, data: dict[str, Any]) -> None:
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        # mkstemp creates the file 0600, and the rename keeps that.
        write_atomic(self.path, {**data, "url": self.url})
        os.chmod(self.path, 0o600)

    @property
    def signed_in(self) -> bool:
        return bool(self._read().get("tokens"))

    @property
    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_tokens(self) -> OAuthToken | None:
        try:
            tokens = self._read().get("tokens")
            return OAuthToken.model_validate(tokens) if tokens else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = time.time() + tokens.expires_in if tokens.expires_in else None
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        try:
            info = self._read().get("client_info")
            return OAuthClientInformationFull.model_validate(info) if info else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._read()
        data["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    def forget_tokens(self) -> None:
        data = self._read()
        data.pop("tokens", None)
        data.pop("expires_at", None)
        self._write(data)

    def sign_out(self) -> bool:
        """Forget everything about this server's sign-in. True if there was one."""
        had = self.signed_in
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        return had


class _Provider(OAuthClientProvider):
    """The library's provider, plus the stored expiry time, so a token that expired while
    bassi was not running is refreshed instead of being sent and refused."""

    def __init__(self, store: TokenStore, **kwargs: Any) -> None:
        super().__init__(storage=store, **kwargs)
        self._store = store

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self._store.expires_at


def _metadata(redirect_uri: str) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name="bassi",
        software_id="bassi",
        software_version=__version__,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )


async def _no_person(_: object = None) -> Any:
    raise SignInRequired("the stored sign-in is missing or expired")


@dataclass
class OAuth:
    """Sign-ins for every HTTP server, kept in the user's ``config_dir``."""

    config_dir: Path

    def store(self, url: str) -> TokenStore:
        return TokenStore(self.config_dir, url)

    def signed_in(self, spec: HttpServerConfig) -> bool:
        return self.store(spec.url).signed_in

    def auth_for(self, spec: HttpServerConfig) -> httpx2.Auth | None:
        """For connecting: the stored sign-in (refreshed when needed), or None when there is
        none. It never asks a person; when it would have to, the connection fails with
        ``SignInRequired`` and the server shows "needs sign-in"."""
        store = self.store(spec.url)
        if not store.signed_in:
            return None
        redirect = f"http://127.0.0.1{CALLBACK_PATH}"
        return _Provider(
            store,
            server_url=spec.url,
            client_metadata=_metadata(redirect),
            redirect_handler=_no_person,
            callback_handler=_no_person,
        )

    def sign_out(self, spec: HttpServerConfig) -> bool:
        return self.store(spec.url).sign_out()

    async def sign_in(
        self, spec: HttpServerConfig, open_url: OpenUrl, *, wait: float = SIGN_IN_TIMEOUT
    ) -> None:
        """Run the browser sign-in for ``spec`` and store its tokens. Raises SignInError."""
        store = self.store(spec.url)
        client = await store.get_client_info()
        port = _registered_port(client)
        async with _callback_server(port) as callback:
            if client is not None and callback.redirect_uri not in {
                str(u) for u in client.redirect_uris or ()
            }:
                # Registered for another port (that one is taken now): register again.
                store.sign_out()
            store.forget_tokens()

            async def wait_for_browser() -> AuthorizationCodeResult:
                try:
                    return await asyncio.wait_for(callback.result, wait)
                except TimeoutError:
                    raise SignInError(f"no answer from the browser within {wait:g} s") from None

            provider = _Provider(
                store,
                server_url=spec.url,
                client_metadata=_metadata(callback.redirect_uri),
                redirect_handler=open_url,
                callback_handler=wait_for_browser,
            )
            try:
                await _touch(spec, provider)
            except SignInError:
                raise
            except httpx2.HTTPError as exc:
                raise SignInError(f"cannot reach {spec.url}: {exc}") from exc
            except Exception as exc:
                raise SignInError(f"{type(exc).__name__}: {exc}") from exc
        if not store.signed_in:
            raise SignInError(f"{spec.url} did not ask for a sign-in (it answered without one)")


async def _touch(spec: HttpServerConfig, provider: httpx2.Auth) -> None:
    """One request to the server through the provider: its 401 starts the flow, and the
    provider retries the request with the new token."""
    headers = {
        **spec.headers,
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LATEST_HANDSHAKE_VERSION,
    }
    async with httpx2.AsyncClient(auth=provider, timeout=spec.timeout) as http:
        if spec.type == "sse":
            async with http.stream("GET", spec.url, headers=headers):
                return
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bassi", "version": __version__},
            },
        }
        async with http.stream("POST", spec.url, json=body, headers=headers):
            return


def _registered_port(client: OAuthClientInformationFull | None) -> int:
    """The port of the redirect URI bassi registered before (the authorization server
    accepts only that one), or 0 for any free port."""
    for uri in client.redirect_uris or () if client else ():
        parsed = urlparse(str(uri))
        if parsed.hostname == "127.0.0.1" and parsed.port:
            return parsed.port
    return 0


@dataclass
class _Callback:
    redirect_uri: str
    result: asyncio.Future[AuthorizationCodeResult]


_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>bassi</title></head>"
    "<body style='font-family:sans-serif'><h2>{title}</h2><p>{text}</p></body></html>"
)


@contextlib.asynccontextmanager
async def _callback_server(port: int) -> AsyncIterator[_Callback]:
    """A one-shot HTTP server on 127.0.0.1 for the authorization server's redirect."""
    result: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.split()
            target = urlparse(parts[1]) if len(parts) >= 2 else urlparse("/")
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            if target.path != CALLBACK_PATH:
                status, title, text = "404 Not Found", "Not found", ""
            elif "code" in query and not result.done():
                result.set_result(
                    AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                )
                status, title = "200 OK", "Signed in"
                text = "bassi has the sign-in. You can close this tab."
            elif "error" in query and not result.done():
                why = query.get("error_description") or query["error"]
                result.set_exception(SignInError(f"the authorization server refused: {why}"))
                status, title, text = "200 OK", "Sign-in refused", "Return to bassi."
            else:
                status, title, text = "400 Bad Request", "Nothing to do", ""
            page = _PAGE.format(title=title, text=text).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(page)}\r\nConnection: close\r\n\r\n".encode()
                + page
            )
            await writer.drain()
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()

    try:
        server = await asyncio.start_server(answer, "127.0.0.1", port)
    except OSError:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
    bound = server.sockets[0].getsockname()[1]
    try:
        yield _Callback(f"http://127.0.0.1:{bound}{CALLBACK_PATH}", result)
    finally:
        server.close()
        await server.wait_closed()
        if not result.done():
            result.cancel()
