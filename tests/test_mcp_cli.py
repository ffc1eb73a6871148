"""``bassi mcp list|get|login|logout`` run as a person runs them: the real command in a
subprocess, real servers, a real OAuth server for the sign-in with ``$BROWSER`` as the
browser."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from bassi.core.masking import mask_args, mask_url
from bassi.core.settings import Settings
from tests.conftest import approve_project
from tests.discovery_fixtures import SERVERS, stdio_entry, write_config
from tests.oauth_fixtures import SecureServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def bassi(project: Path, *args: str, **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bassi",
        *args,
        cwd=project,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def configure(project: Path, servers: dict[str, Any]) -> None:
    """The project's servers file, approved as a user would after the first start."""
    write_config(project, servers)
    approve_project(Settings(project_dir=project, env=dict(os.environ)))


def servers_by_name(output: str) -> dict[str, Any]:
    return {s["name"]: s for s in json.loads(output)["servers"]}


async def test_list_reports_every_server_and_skips_known_failures(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    failing = f"echo started >> {starts}; echo 'Error: DB_URL is not set' >&2; exit 3"
    configure(
        tmp_path,
        {
            "feat": stdio_entry("features_server.py", "--api-key=sekrit"),
            "raw": stdio_entry("raw_server.py", "bad-tool"),
            "dead": {"command": "sh", "args": ["-c", failing]},
            "off": {**stdio_entry("good_server.py"), "disabled": True},
        },
    )
    code, out, _ = await bassi(tmp_path, "mcp", "list", "--json")
    assert code == 1
    servers = servers_by_name(out)
    feat = servers["feat"]
    assert (feat["status"], feat["transport"]) == ("connected", "stdio")
    assert (feat["tools"], feat["prompts"], feat["resources"], feat["resource_templates"]) == (
        6,
        2,
        1,
        1,
    )
    assert feat["target"].endswith("features_server.py --api-key=•••")
    assert "sekrit" not in out
    assert servers["raw"]["tools"] == 2
    assert servers["raw"]["warnings"][0].startswith("tool 'broken' skipped")
    dead = servers["dead"]
    assert dead["status"] == "failed"
    assert "exited with code 3" in dead["error"]
    assert "Error: DB_URL is not set" in dead["error"]
    assert servers["off"]["status"] == "disabled"
    assert starts.read_text().count("started") == 3

    code, out, _ = await bassi(tmp_path, "mcp", "list")
    assert code == 1
    assert starts.read_text().count("started") == 3, "a known failure was started again"
    assert "dead  failed  stdio" in out
    assert "Error: DB_URL is not set" in out
    assert "6 tools · 2 prompts · 2 resources" in out


async def test_get_shows_one_server_in_full(tmp_path: Path) -> None:
    configure(tmp_path, {"feat": stdio_entry("features_server.py")})
    code, out, _ = await bassi(tmp_path, "mcp", "get", "feat", "--json")
    assert code == 0
    feat = json.loads(out)
    greet = next(p for p in feat["prompts"] if p["name"] == "greet")
    assert greet["command"] == "/mcp__feat__greet"
    assert [a["name"] for a in greet["arguments"]] == ["name", "style"]
    assert feat["resources"][0]["uri"] == "notes://today"
    assert feat["resource_templates"][0]["uri_template"] == "notes://day/{day}"

    code, out, _ = await bassi(tmp_path, "mcp", "get", "feat")
    assert "/mcp__feat__greet  Write a greeting for someone." in out
    assert "@feat:notes://day/{day}" in out

    code, _, err = await bassi(tmp_path, "mcp", "get", "nowhere")
    assert code == 2
    assert "unknown server 'nowhere'" in err


async def test_login_list_and_logout_against_an_oauth_server(
    tmp_path: Path, secure: SecureServer
) -> None:
    configure(tmp_path, {"secure": {"type": "http", "url": secure.url}})
    code, out, _ = await bassi(tmp_path, "mcp", "list", "--json")
    secure_entry = servers_by_name(out)["secure"]
    assert secure_entry["status"] == "needs sign-in"
    assert secure_entry["signed_in"] is False
    code, out, _ = await bassi(tmp_path, "mcp", "list")
    assert "sign in: bassi mcp login secure" in out

    browser = f"{sys.executable} {SERVERS / 'fake_browser.py'} %s"
    code, out, err = await bassi(tmp_path, "mcp", "login", "secure", BROWSER=browser)
    assert code == 0, err
    assert "Sign in to secure in your browser:" in out
    assert "/authorize?" in out
    assert "Signed in to secure: 1 tool." in out
    assert secure.provider.authorizations == 1

    code, out, _ = await bassi(tmp_path, "mcp", "list", "--json")
    assert code == 0
    assert servers_by_name(out)["secure"]["status"] == "connected"
    assert servers_by_name(out)["secure"]["signed_in"] is True

    code, out, _ = await bassi(tmp_path, "mcp", "logout", "secure")
    assert "Signed out of secure" in out
    code, out, _ = await bassi(tmp_path, "mcp", "list", "--json")
    assert servers_by_name(out)["secure"]["status"] == "needs sign-in"


async def test_login_to_a_stdio_server_says_there_is_nothing_to_sign_in_to(
    tmp_path: Path,
) -> None:
    configure(tmp_path, {"good": stdio_entry("good_server.py")})
    code, _, err = await bassi(tmp_path, "mcp", "login", "good")
    assert code == 2
    assert "not an HTTP server" in err


def test_secrets_in_commands_and_urls_are_masked() -> None:
    assert mask_args(["--token", "abc", "--api-key=xyz", "--port", "8080", "GITHUB_TOKEN=t"]) == [
        "--token",
        "•••",
        "--api-key=•••",
        "--port",
        "8080",
        "GITHUB_TOKEN=•••",
    ]
    assert mask_url("https://me:pw@host/mcp?access_token=abc&region=eu") == (
        "https://•••@host/mcp?access_token=•••&region=eu"
    )
