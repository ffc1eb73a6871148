"""Signing in to an OAuth-protected MCP server, end to end on 127.0.0.1: discovery,
registration, PKCE, the browser redirect to bassi's callback, stored tokens, refresh and
sign-out, with the mcp library's real server-side auth as the other end."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bassi.core.catalog import Catalog
from bassi.core.oauth import SignInError, tokens_dir
from bassi.core.registry import ServerStatus
from bassi.core.settings import Settings
from tests.conftest import approve_project
from tests.discovery_fixtures import text_of, write_config
from tests.oauth_fixtures import Browser, SecureServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
async def open_catalog(tmp_path: Path, secure: SecureServer) -> AsyncIterator[Any]:
    """``await open_catalog()``: a started catalog whose one server is the secure one; every
    catalog is closed at the end. Catalogs share the project and the user directory, so a
    second one is "bassi started again"."""
    write_config(tmp_path, {"secure": {"type": "http", "url": secure.url}})
    approve_project(Settings(project_dir=tmp_path, env=dict(os.environ)))
    opened: list[Catalog] = []

    async def make() -> Catalog:
        catalog = Catalog(Settings(project_dir=tmp_path, env=dict(os.environ)), shipped={})
        opened.append(catalog)
        await catalog.start()
        await catalog.wait_ready()
        return catalog

    yield make
    for catalog in opened:
        await catalog.close()


async def test_a_server_that_needs_sign_in_says_so_and_is_not_a_failure(
    open_catalog: Any,
) -> None:
    catalog = await open_catalog()
    entry = catalog.registry.server("secure")
    assert entry.status is ServerStatus.NEEDS_AUTH
    assert entry.error is not None and entry.error.startswith("needs sign-in")
    result = await catalog.call_tool("secure", "whoami", {})
    assert text_of(result) == ("server 'secure' needs sign-in (/mcp, or: bassi mcp login secure)")


async def test_signing_in_stores_tokens_privately_and_connects(
    open_catalog: Any, secure: SecureServer, user_config_dir: Path
) -> None:
    catalog = await open_catalog()
    browser = Browser()
    await catalog.sign_in("secure", browser)
    await catalog.wait_ready()
    entry = catalog.registry.server("secure")
    assert entry.status is ServerStatus.CONNECTED, entry.error
    assert [t.name for t in entry.tools] == ["whoami"]
    assert text_of(await catalog.call_tool("secure", "whoami", {})) == "ann"
    assert len(browser.opened) == 1
    assert browser.opened[0].startswith(secure.url.removesuffix("/mcp") + "/authorize?")
    assert "code_challenge_method=S256" in browser.opened[0]

    directory = tokens_dir(user_config_dir)
    files = list(directory.iterdir())
    assert len(files) == 1
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    stored = json.loads(files[0].read_text())
    assert stored["url"] == secure.url
    assert stored["tokens"]["access_token"] in secure.provider.access


async def test_a_later_start_uses_the_stored_sign_in_and_refreshes_an_expired_token(
    open_catalog: Any, secure: SecureServer
) -> None:
    first = await open_catalog()
    await first.sign_in("secure", Browser())
    await first.close()
    assert secure.provider.authorizations == 1

    again = await open_catalog()
    assert again.registry.server("secure").status is ServerStatus.CONNECTED
    await again.close()

    secure.provider.expire_access_tokens()
    for token in list(secure.provider.access):
        secure.provider.access.pop(token)
    # The stored token's expiry is in the past too, so bassi refreshes before sending it.
    for path in tokens_dir(Path(os.environ["BASSI_CONFIG_DIR"])).iterdir():
        data = json.loads(path.read_text())
        data["expires_at"] = 1
        path.write_text(json.dumps(data))
    refreshed = await open_catalog()
    entry = refreshed.registry.server("secure")
    assert entry.status is ServerStatus.CONNECTED, entry.error
    assert secure.provider.refreshes == 1
    assert secure.provider.authorizations == 1


async def test_signing_out_forgets_the_tokens(open_catalog: Any, user_config_dir: Path) -> None:
    catalog = await open_catalog()
    await catalog.sign_in("secure", Browser())
    assert await catalog.sign_out("secure") is True
    await catalog.wait_ready()
    assert catalog.registry.server("secure").status is ServerStatus.NEEDS_AUTH
    assert list(tokens_dir(user_config_dir).iterdir()) == []


async def test_a_browser_that_never_comes_back_ends_the_sign_in_with_a_reason(
    open_catalog: Any,
) -> None:
    catalog = await open_catalog()
    opened: list[str] = []

    async def nobody_there(url: str) -> None:
        opened.append(url)

    with pytest.raises(SignInError, match=r"no answer from the browser within 0\.5 s"):
        await catalog.oauth.sign_in(catalog.http_config("secure"), nobody_there, wait=0.5)
    assert len(opened) == 1
    assert catalog.registry.server("secure").status is ServerStatus.NEEDS_AUTH
