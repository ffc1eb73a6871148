"""Whether the agent can authenticate at all, decided before the CLI is started.

bassi must start, and everything that needs no model must work, without an API key. Without
credentials the CLI would start, send a request and come back with a terse "Invalid API key";
checking first lets the first chat message say exactly how to fix it, and spares the CLI start.
The checks mirror where the Claude Code CLI looks: the key and token variables, the cloud
providers (whose own credentials we cannot see), and the login it stores after
``claude auth login``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from bassi.core.events import AgentError
from bassi.core.json_store import loads, read_text

CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
CLOUD_PROVIDER_VARIABLES = (
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """Where the CLI keeps its login and transcripts: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    if configured := env.get("CLAUDE_CONFIG_DIR"):
        return Path(configured).expanduser()
    return _home(env) / ".claude"


def credential_source(env: Mapping[str, str]) -> str | None:
    """A short description of the credentials the CLI will use, or None if it has none."""
    for name in CREDENTIAL_VARIABLES:
        if env.get(name, "").strip():
            return name
    for name in CLOUD_PROVIDER_VARIABLES:
        if env.get(name, "").strip().lower() not in ("", "0", "false", "no"):
            return name
    credentials_file = claude_config_dir(env) / ".credentials.json"
    if _has_oauth_login(credentials_file):
        return f"Claude login ({credentials_file})"
    if sys.platform == "darwin" and _has_keychain_login(env):
        return "Claude login (macOS keychain)"
    return None


KEYS_PAGE = "https://console.anthropic.com/settings/keys"
HOW_TO_SET_A_KEY = (
    "Type /login to paste an API key for this session, or set one before starting bassi: "
    f"export ANTHROPIC_API_KEY=sk-ant-... (keys are at {KEYS_PAGE})."
)


def missing_credentials_error() -> AgentError:
    """What the first chat message answers when :func:`credential_source` found nothing."""
    return AgentError(
        kind="credentials",
        message="No Anthropic credentials found: bassi needs an API key or a Claude login to chat.",
        hint=HOW_TO_SET_A_KEY
        + "\nA Claude account works too: sign in once with Claude Code (claude auth login).",
    )


def rejected_credentials_error(credentials: str, status: int | None) -> AgentError:
    """The API refused the credentials (HTTP 401/403): no retry can fix that."""
    code = f" (HTTP {status})" if status else ""
    return AgentError(
        kind="auth",
        message=f"{credentials} was rejected by the Anthropic API{code}: it is wrong, revoked "
        "or has no access.",
        hint=HOW_TO_SET_A_KEY,
    )


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _has_oauth_login(path: Path) -> bool:
    try:
        data = loads(read_text(path), path)
    except (OSError, ValueError):
        return False
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    return isinstance(oauth, dict) and bool(oauth.get("accessToken") or oauth.get("refreshToken"))


def _has_keychain_login(env: Mapping[str, str]) -> bool:
    """On macOS the token itself is in the keychain; the CLI's config file says whose it is."""
    config_file = (
        claude_config_dir(env) / ".claude.json"
        if env.get("CLAUDE_CONFIG_DIR")
        else _home(env) / ".claude.json"
    )
    try:
        data = loads(read_text(config_file), config_file)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("oauthAccount"))
