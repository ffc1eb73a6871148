"""Whether bassi can authenticate is decided from the environment and the CLI's login file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bassi.core.credentials import (
    claude_config_dir,
    credential_source,
    missing_credentials_error,
    rejected_credentials_error,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def login_file(config_dir: Path, payload: object) -> None:
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / ".credentials.json").write_text(json.dumps(payload))


@pytest.mark.parametrize(
    "variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"]
)
def test_a_key_or_token_variable_is_enough(home: Path, variable: str) -> None:
    assert credential_source({"HOME": str(home), variable: "sk-something"}) == variable


def test_blank_variables_and_an_empty_home_are_no_credentials(home: Path) -> None:
    env = {"HOME": str(home), "ANTHROPIC_API_KEY": "  ", "CLAUDE_CODE_USE_BEDROCK": "0"}
    assert credential_source(env) is None


def test_a_cloud_provider_brings_its_own_credentials(home: Path) -> None:
    assert credential_source({"HOME": str(home), "CLAUDE_CODE_USE_VERTEX": "1"}) == (
        "CLAUDE_CODE_USE_VERTEX"
    )


def test_a_claude_login_in_the_home_config_dir_counts(home: Path) -> None:
    login_file(home / ".claude", {"claudeAiOauth": {"accessToken": "t", "refreshToken": "r"}})
    source = credential_source({"HOME": str(home)})
    assert source is not None and source.startswith("Claude login")
    assert str(home / ".claude" / ".credentials.json") in source


def test_claude_config_dir_moves_the_login(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "config"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(elsewhere)}
    assert claude_config_dir(env) == elsewhere
    login_file(home / ".claude", {"claudeAiOauth": {"accessToken": "t"}})
    assert credential_source(env) is None
    login_file(elsewhere, {"claudeAiOauth": {"accessToken": "t"}})
    assert credential_source(env) is not None


@pytest.mark.parametrize("content", ["not json {", "[]", '{"claudeAiOauth": {}}', "{}"])
def test_a_broken_or_empty_login_file_is_no_login(home: Path, content: str) -> None:
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text(content)
    assert credential_source({"HOME": str(home)}) is None


def test_the_missing_credentials_error_says_how_to_fix_it() -> None:
    error = missing_credentials_error()
    assert error.kind == "credentials"
    assert "export ANTHROPIC_API_KEY=sk-ant-" in error.hint
    assert "/login" in error.hint  # fixable without restarting
    assert "site-packages" not in error.hint and "_bundled" not in error.hint  # no paths


def test_a_rejected_key_says_what_to_set_in_bassis_words() -> None:
    error = rejected_credentials_error("ANTHROPIC_API_KEY", 401)
    assert error.kind == "auth"
    assert error.message.startswith(
        "ANTHROPIC_API_KEY was rejected by the Anthropic API (HTTP 401)"
    )
    assert "/login" in error.hint and "export ANTHROPIC_API_KEY=" in error.hint
