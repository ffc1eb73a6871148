"""Reading ``.mcp.json``, the MCP servers file in Claude Code's format.

A project's file is often hand-edited, shared between tools and half-broken. So nothing here
raises: every mistake becomes a ``ConfigProblem`` naming the file and the server, and every
server that is valid still loads. A missing file simply means "no external servers".
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from bassi.core.json_store import DuplicateKey, JsonFileError, first_non_finite, loads, read_text
from bassi.core.secrets import MIN_MASKED_LENGTH, ExpandedValues
from bassi.core.tools import is_valid_server_name

DEFAULT_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools, unless its entry says otherwise."""
MAX_TIMEOUT = 24 * 3600.0
"""Longest timeout accepted: beyond a day it is a typo (milliseconds meant), not a wish."""

# Claude Code's expansion: ``${NAME}`` or ``${NAME:-default}``; the default runs to the first
# ``}``. ``$NAME`` without braces is left alone, as Claude Code does.
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


class Severity(StrEnum):
    ERROR = "error"
    """The server was not loaded."""
    WARNING = "warning"
    """The server loaded, but probably not as its author meant."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    path: Path
    message: str
    server: str | None = None
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        where = f"{self.path}: server '{self.server}'" if self.server else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class _ServerBase:
    name: str
    timeout: float = DEFAULT_TIMEOUT
    always_load: bool = False
    """Claude Code's ``alwaysLoad``: expose this server's tools even in progressive mode."""
    disabled: bool = False
    expanded: ExpandedValues = field(default_factory=ExpandedValues)
    """What ``${VAR}`` put into this entry: masked wherever the entry is shown or logged."""
    tool_timeout: float | None = None
    """``toolTimeout``: seconds one tool call may run; None means bassi's default."""


@dataclass(frozen=True, slots=True)
class StdioServerConfig(_ServerBase):
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Set for the server on top of bassi's own environment."""
    cwd: Path | None = None
    """Already resolved against the project directory; None means the project directory."""
    type: Literal["stdio"] = "stdio"

    @property
    def display_target(self) -> str:
        """The command line to show, with expanded values masked."""
        return self.expanded.mask(shlex.join([self.command, *self.args]))

    @property
    def display_details(self) -> tuple[str, ...]:
        """The rest of what decides how it runs, for the person approving it: its
        environment (``PATH`` or ``NODE_OPTIONS`` there change what the command line does)
        and its working directory, with expanded values masked."""
        lines = [self.expanded.mask(f"env {name}={value}") for name, value in self.env.items()]
        return (*lines, f"in {self.cwd}") if self.cwd is not None else tuple(lines)


@dataclass(frozen=True, slots=True)
class HttpServerConfig(_ServerBase):
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    type: Literal["http", "sse"] = "http"
    """``http`` is streamable HTTP; ``sse`` the older HTTP+SSE transport."""

    @property
    def display_target(self) -> str:
        """The URL to show, with expanded values masked."""
        return self.expanded.mask(self.url)

    @property
    def display_details(self) -> tuple[str, ...]:
        """The headers it sends, with expanded values masked."""
        return tuple(self.expanded.mask(f"header {k}: {v}") for k, v in self.headers.items())


ServerConfig = StdioServerConfig | HttpServerConfig


@dataclass(frozen=True, slots=True)
class McpConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)


def load_mcp_config(
    path: Path,
    env: Mapping[str, str],
    *,
    project_dir: Path | None = None,
    required: bool = False,
) -> McpConfig:
    """Read ``path``; ``env`` is what ``${VAR}`` expands from. Relative ``cwd`` entries are
    resolved against ``project_dir`` (default: the file's directory). A missing file means no
    servers, and is a problem only when ``required`` (a file the person named)."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        return McpConfig(problems=[ConfigProblem(path, "file not found")] if required else [])
    except JsonFileError as exc:
        return McpConfig(problems=[ConfigProblem(path, f"cannot read the file: {exc.reason}")])
    except OSError as exc:
        return McpConfig(problems=[ConfigProblem(path, f"cannot read the file: {exc}")])
    return parse_mcp_config(text, path, env, project_dir=project_dir or path.parent)


def parse_mcp_config(
    text: str, path: Path, env: Mapping[str, str], *, project_dir: Path
) -> McpConfig:
    config = McpConfig()
    duplicates: list[DuplicateKey] = []
    try:
        # NaN and Infinity are kept as markers here, so they cost the server they are in,
        # not the file.
        data = loads(text, path, keep_non_finite=True, duplicates=duplicates)
    except JsonFileError as exc:
        config.problems.append(ConfigProblem(path, exc.reason))
        return config
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        config.problems.append(
            ConfigProblem(path, 'expected an object with an "mcpServers" object inside')
        )
        return config
    for twice in duplicates:
        if twice.path == ("mcpServers",):
            config.problems.append(
                ConfigProblem(
                    path,
                    f"defined twice (lines {twice.first_line} and {twice.later_line}); the "
                    f"entry at line {twice.later_line} is used, as Claude Code does",
                    twice.key,
                    Severity.WARNING,
                )
            )
    for name, entry in servers.items():
        parsed = _ServerParser(path, name, env, project_dir, config.problems).parse(entry)
        if parsed is not None:
            config.servers[name] = parsed
    return config


class _InvalidEntryError(Exception):
    """One server entry cannot be used; the message is for the person who wrote it."""


@dataclass
class _ServerParser:
    path: Path
    name: str
    env: Mapping[str, str]
    project_dir: Path
    problems: list[ConfigProblem]
    _reported: set[str] = field(default_factory=set)
    _expanded: dict[str, str] = field(default_factory=dict)

    def parse(self, entry: object) -> ServerConfig | None:
        if not is_valid_server_name(self.name):
            self._problem(
                "invalid server name: use 1-64 letters, digits, '_' or '-', without '__' and "
                "not ending in '_', so tools can be named mcp__<server>__<tool>"
            )
            return None
        try:
            config = self._parse(entry)
        except _InvalidEntryError as exc:
            self._problem(str(exc))
            return None
        return replace(config, expanded=ExpandedValues(dict(self._expanded)))

    def _parse(self, entry: object) -> ServerConfig:
        if not isinstance(entry, dict):
            raise _InvalidEntryError(f"expected an object, got {_json_type(entry)}")
        if (where := first_non_finite(entry)) is not None:
            key, value = where
            raise _InvalidEntryError(
                f'"{key}" is {value.text}, which JSON does not allow; write a number'
            )
        kind = entry.get("type", "stdio")
        common: dict[str, Any] = {
            "name": self.name,
            "timeout": self._timeout(entry),
            "always_load": self._bool(entry, "alwaysLoad"),
            "disabled": self._bool(entry, "disabled"),
            "tool_timeout": self._seconds(entry, "toolTimeout", None),
        }
        if kind == "stdio":
            return self._stdio(entry, common)
        if kind in ("http", "sse"):
            return self._http(entry, kind, common)
        raise _InvalidEntryError(
            f'unknown type {json.dumps(kind)}: expected "stdio", "http" or "sse"'
        )

    def _stdio(self, entry: dict[str, Any], common: dict[str, Any]) -> StdioServerConfig:
        command = entry.get("command")
        if command is None or command == "":
            hint = ""
            if "url" in entry:
                hint = ' (a server with a "url" needs "type": "http" or "sse")'
            raise _InvalidEntryError(f'missing "command"{hint}')
        if not isinstance(command, str):
            raise _InvalidEntryError(f'"command" must be a string, got {_json_type(command)}')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise _InvalidEntryError('"args" must be a list of strings')
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise _InvalidEntryError(f'"cwd" must be a string, got {_json_type(cwd)}')
        return StdioServerConfig(
            **common,
            command=self._expand(command),
            args=tuple(self._expand(a) for a in args),
            env=self._string_map(entry, "env"),
            cwd=self.project_dir / self._expand(cwd) if cwd else None,
        )

    def _http(
        self, entry: dict[str, Any], kind: Literal["http", "sse"], common: dict[str, Any]
    ) -> HttpServerConfig:
        url = entry.get("url")
        if url is None or url == "":
            raise _InvalidEntryError('missing "url"')
        if not isinstance(url, str):
            raise _InvalidEntryError(f'"url" must be a string, got {_json_type(url)}')
        url = self._expand(url)
        if not url.startswith(("http://", "https://")):
            raise _InvalidEntryError(f'"url" must start with http:// or https://, got {url!r}')
        return HttpServerConfig(
            **common, url=url, headers=self._string_map(entry, "headers"), type=kind
        )

    def _timeout(self, entry: dict[str, Any]) -> float:
        seconds = self._seconds(entry, "timeout", DEFAULT_TIMEOUT)
        assert seconds is not None
        return seconds

    def _seconds(self, entry: dict[str, Any], key: str, default: float | None) -> float | None:
        value = entry.get(key, default)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value <= MAX_TIMEOUT
        ):
            raise _InvalidEntryError(
                f'"{key}" must be a positive number of seconds, at most {MAX_TIMEOUT:.0f} '
                f"(a day), got {json.dumps(value)}"
            )
        return float(value)

    def _bool(self, entry: dict[str, Any], key: str) -> bool:
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise _InvalidEntryError(f'"{key}" must be true or false, got {json.dumps(value)}')
        return value

    def _string_map(self, entry: dict[str, Any], key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _InvalidEntryError(f'"{key}" must be an object of strings')
        return {k: self._expand(v) for k, v in value.items()}

    def _expand(self, text: str) -> str:
        """Claude Code's rules: a set variable (even empty) wins, then the default; an unset
        variable without a default stays as written and is reported."""
        missing: list[str] = []

        def substitute(match: re.Match[str]) -> str:
            name, sep, default = match.group(1).partition(":-")
            if name in self.env:
                value = self.env[name]
                if len(value) >= MIN_MASKED_LENGTH:
                    self._expanded.setdefault(value, name)
                return value
            if sep:
                return default
            missing.append(name)
            return match.group(0)

        expanded = _VARIABLE.sub(substitute, text)
        for name in missing:
            if name in self._reported:
                continue
            self._reported.add(name)
            self._problem(
                f"environment variable {name} is not set; '${{{name}}}' is used as written",
                Severity.WARNING,
            )
        return expanded

    def _problem(self, message: str, severity: Severity = Severity.ERROR) -> None:
        masked = ExpandedValues(self._expanded).mask(message)
        self.problems.append(ConfigProblem(self.path, masked, self.name, severity))


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
