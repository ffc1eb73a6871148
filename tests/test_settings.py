"""Settings come from flags over BASSI_* variables over defaults; bad values say what to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bassi.core.settings import Settings, SettingsError, ToolsMode


def test_environment_then_flags_override_defaults() -> None:
    env = {
        "BASSI_MODEL": "m-env",
        "BASSI_TOOLS_MODE": "progressive",
        "BASSI_TOOLS_TOKEN_BUDGET": "500",
        "BASSI_CORE_TOOLS": "bash/execute, web/fetch,",
        "BASSI_ALLOW": "mcp__git__*",
        "BASSI_DENY": "mcp__bash,mcp__web__fetch",
    }
    settings = Settings.from_env(env, model="m-flag", tools_mode=None)
    assert settings.model == "m-flag"
    assert settings.tools_mode is ToolsMode.PROGRESSIVE
    assert settings.tools_token_budget == 500
    assert settings.core_tools == ("bash/execute", "web/fetch")
    assert settings.allow == ("mcp__git__*",)
    assert settings.deny == ("mcp__bash", "mcp__web__fetch")


@pytest.mark.parametrize(
    ("variable", "value", "hint"),
    [
        ("BASSI_TOOLS_MODE", "some", "all, progressive, auto"),
        ("BASSI_TOOLS_TOKEN_BUDGET", "10k", "whole number"),
    ],
)
def test_a_bad_value_names_the_variable(variable: str, value: str, hint: str) -> None:
    with pytest.raises(SettingsError, match=variable) as info:
        Settings.from_env({variable: value})
    assert hint in str(info.value)


def test_the_command_reports_a_bad_value_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bassi", "tools", "list"],
        env={"BASSI_TOOLS_MODE": "everything", "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bassi: BASSI_TOOLS_MODE='everything': use one of all, progressive, auto"
    )


@pytest.mark.parametrize(
    ("kind", "own", "xdg", "under_home"),
    [
        ("config", "BASSI_CONFIG_DIR", "XDG_CONFIG_HOME", ".config"),
        ("cache", "BASSI_CACHE_DIR", "XDG_CACHE_HOME", ".cache"),
    ],
)
def test_the_users_directories_follow_the_environment_not_the_project(
    tmp_path: Path, kind: str, own: str, xdg: str, under_home: str
) -> None:
    """Grants and caches alike live where the project cannot reach: a repository could
    otherwise ship them."""
    project = tmp_path / "repo"
    home = tmp_path / "home"
    plain = Settings(project_dir=project, env={"HOME": str(home)})
    assert getattr(plain, f"{kind}_dir") == home / under_home / "bassi"
    chosen_xdg = Settings(project_dir=project, env={"HOME": str(home), xdg: "/x"})
    assert getattr(chosen_xdg, f"{kind}_dir") == Path("/x/bassi")
    chosen = Settings(project_dir=project, env={own: str(tmp_path / "c")})
    assert getattr(chosen, f"{kind}_dir") == tmp_path / "c"
    project_dir = getattr(chosen, f"project_{kind}_dir")
    assert project_dir == tmp_path / "c" / "projects" / chosen.project_key
    assert not project_dir.is_relative_to(project)


def test_each_project_has_its_own_key(tmp_path: Path) -> None:
    env = {"BASSI_CONFIG_DIR": str(tmp_path / "c")}
    one = Settings(project_dir=tmp_path / "a", env=env)
    same = Settings(project_dir=tmp_path / "b" / ".." / "a", env=env)
    other = Settings(project_dir=tmp_path / "b", env=env)
    assert one.project_key == same.project_key != other.project_key
