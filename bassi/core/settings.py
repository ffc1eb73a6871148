"""Everything a bassi run is configured by, in one place.

Values come from, in order of precedence: command-line flags, environment variables
(``BASSI_*``), then defaults. The project directory is where bassi was started.

Three places hold state. ``<project>/.bassi/`` holds what is harmless for a repository to ship
or for anyone to edit (input history, servers disabled for good, the log), all of it JSON or
text bassi only ever reads as data. Everything that grants something (pins, servers allowed
"always", project trust, sign-in tokens) lives in the user's own bassi directory
(``config_dir``), keyed by the project's path, because a cloned repository must not be able
to grant itself anything. Caches (the search index, the catalog as last connected) live in
the user's cache directory (``cache_dir``), keyed the same way: Whoosh reads its index's table
of contents with pickle, so an index a repository ships would run its code when opened.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class ToolsMode(StrEnum):
    ALL = "all"
    PROGRESSIVE = "progressive"
    AUTO = "auto"


DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Settings:
    project_dir: Path = field(default_factory=Path.cwd)
    mcp_config: Path | None = None
    """``--mcp-config``; None means ``<project_dir>/.mcp.json`` if it exists."""
    model: str = DEFAULT_MODEL
    system_prompt_extra: str = ""
    tools_mode: ToolsMode = ToolsMode.AUTO
    tools_token_budget: int = 20_000
    """In ``auto`` mode: above this many estimated tokens of tool definitions, go progressive."""
    core_tools: tuple[str, ...] = ()
    """Tools always exposed in progressive mode (refs or qualified names)."""
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    auto_approve_read_only: bool = False
    """Run tools that declare themselves read-only (and not destructive) without asking."""
    continue_session: bool = False
    tool_timeout: float = 600.0
    """Seconds an external tool call may run before bassi gives up on it (``BASSI_TOOL_TIMEOUT``;
    a server's ``toolTimeout`` in ``.mcp.json`` overrides it)."""
    install_timeout: float = 600.0
    """Seconds a server started through npx/uvx may take on a start that installs the package
    (``BASSI_INSTALL_TIMEOUT``); its normal ``timeout`` applies once it is installed."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def state_dir(self) -> Path:
        """``<project>/.bassi``: per-project files that grant nothing."""
        return self.project_dir / ".bassi"

    @property
    def config_dir(self) -> Path:
        """The user's bassi directory: ``$BASSI_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/bassi``,
        else ``~/.config/bassi`` (home from ``env``, so tests and the CLI agree)."""
        return self._user_dir("BASSI_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")

    @property
    def cache_dir(self) -> Path:
        """The user's bassi cache: ``$BASSI_CACHE_DIR``, else ``$XDG_CACHE_HOME/bassi``, else
        ``~/.cache/bassi``."""
        return self._user_dir("BASSI_CACHE_DIR", "XDG_CACHE_HOME", ".cache")

    def _user_dir(self, own: str, xdg: str, under_home: str) -> Path:
        if configured := self.env.get(own):
            return Path(configured).expanduser()
        if base := self.env.get(xdg):
            return Path(base).expanduser() / "bassi"
        home = Path(self.env["HOME"]) if self.env.get("HOME") else Path.home()
        return home / under_home / "bassi"

    @property
    def project_key(self) -> str:
        """A stable, file-name-safe key for this project's records in ``config_dir``."""
        resolved = str(self.project_dir.resolve())
        return hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:24]

    @property
    def project_config_dir(self) -> Path:
        """``config_dir/projects/<key>``: what the user granted this project."""
        return self.config_dir / "projects" / self.project_key

    @property
    def project_cache_dir(self) -> Path:
        """``cache_dir/projects/<key>``: this project's search index and catalog cache, where
        nothing from the project itself can be."""
        return self.cache_dir / "projects" / self.project_key

    @property
    def mcp_config_path(self) -> Path:
        return self.mcp_config or self.project_dir / ".mcp.json"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Defaults, overridden by ``BASSI_*`` variables, overridden by ``overrides`` whose
        value is not None (how command-line flags arrive).

        Raises SettingsError naming the variable when one holds a value bassi can't use."""
        env = dict(os.environ if env is None else env)
        values: dict[str, object] = {"env": env}
        if model := env.get("BASSI_MODEL"):
            values["model"] = model
        if mode := env.get("BASSI_TOOLS_MODE"):
            try:
                values["tools_mode"] = ToolsMode(mode)
            except ValueError:
                choices = ", ".join(m.value for m in ToolsMode)
                raise SettingsError(f"BASSI_TOOLS_MODE={mode!r}: use one of {choices}") from None
        if budget := env.get("BASSI_TOOLS_TOKEN_BUDGET"):
            if not budget.isdigit():
                raise SettingsError(f"BASSI_TOOLS_TOKEN_BUDGET={budget!r}: use a whole number")
            values["tools_token_budget"] = int(budget)
        for key, variable in (
            ("tool_timeout", "BASSI_TOOL_TIMEOUT"),
            ("install_timeout", "BASSI_INSTALL_TIMEOUT"),
        ):
            if seconds := env.get(variable):
                values[key] = _seconds(variable, seconds)
        for key, variable in (
            ("core_tools", "BASSI_CORE_TOOLS"),
            ("allow", "BASSI_ALLOW"),
            ("deny", "BASSI_DENY"),
        ):
            if listed := env.get(variable):
                values[key] = tuple(n.strip() for n in listed.split(",") if n.strip())
        if read_only := env.get("BASSI_AUTO_APPROVE_READ_ONLY"):
            if read_only not in ("0", "1"):
                raise SettingsError(
                    f"BASSI_AUTO_APPROVE_READ_ONLY={read_only!r}: use 1 (on) or 0 (off)"
                )
            values["auto_approve_read_only"] = read_only == "1"
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def _seconds(variable: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise SettingsError(f"{variable}={value!r}: use a positive number of seconds")
    return seconds


class SettingsError(ValueError):
    """A setting bassi cannot use; the message names it and says what would work."""
