"""Everything a bassi run is configured by, in one place.

Values come from, in order of precedence: command-line flags, environment variables
(``BASSI_*``), then defaults. The project directory is where bassi was started; per-project
state (pins, input history, the search-index cache) lives under ``<project>/.bassi/``.
"""

from __future__ import annotations

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
    continue_session: bool = False
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def state_dir(self) -> Path:
        return self.project_dir / ".bassi"

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
            ("core_tools", "BASSI_CORE_TOOLS"),
            ("allow", "BASSI_ALLOW"),
            ("deny", "BASSI_DENY"),
        ):
            if listed := env.get(variable):
                values[key] = tuple(n.strip() for n in listed.split(",") if n.strip())
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


class SettingsError(ValueError):
    """A setting bassi cannot use; the message names it and says what would work."""
