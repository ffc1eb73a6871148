"""An OAuth-protected MCP server with its own authorization server, on 127.0.0.1, for the
sign-in tests: the mcp library's server-side auth (metadata, registration, authorize, token
endpoints, bearer checks) over a small in-memory provider that approves every request at
once, so a "browser" is one HTTP GET that follows the redirects."""

from __future__ import annotations

import asyncio
import secrets
import socket
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
import pytest
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from tests.discovery_fixtures import until


@dataclass
class Provider:
    """Approves everything; counts what happened so tests can tell a refresh from a sign-in."""

    token_lifetime: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)
    authorizations: int = 0
    refreshes: int = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.authorizations += 1
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="ann",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(str(client.client_id))

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: RefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        self.refreshes += 1
        self.refresh.pop(refresh_token.token, None)
        return self._issue(str(client.client_id))

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)

    def expire_access_tokens(self) -> None:
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1

    def _issue(self, client_id: str) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_lifetime
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=[], expires_at=expires, subject="ann"
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=[])
        return OAuthToken(
            access_token=access, refresh_token=refresh, expires_in=self.token_lifetime
        )


@dataclass
class SecureServer:
    url: str
    provider: Provider


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def secure_server(token_lifetime: int = 3600) -> AsyncIterator[SecureServer]:
    """The protected MCP server at ``<base>/mcp``, its authorization server at ``<base>``."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    provider = Provider(token_lifetime=token_lifetime)
    server = MCPServer(
        "secure",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @server.tool(description="Who the signed-in user is.")
    def whoami(ctx: Context) -> str:
        return "ann"

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="on")
    runner = uvicorn.Server(config)
    task = asyncio.create_task(runner.serve())
    try:
        await until(lambda: runner.started or task.done())
        if task.done():
            task.result()
        yield SecureServer(f"{base}/mcp", provider)
    finally:
        runner.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.fixture
async def secure() -> AsyncIterator[SecureServer]:
    """The protected server (the library warns about settings it will change in 3.0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with secure_server() as server:
            yield server


class Browser:
    """Stands in for the person's browser: opens the authorization URL and follows the
    redirects back to bassi's callback, as a browser does once the person approves."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> None:
        self.opened.append(url)
        asyncio.get_running_loop().create_task(self._visit(url))

    @staticmethod
    async def _visit(url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as client:
            await client.get(url)
