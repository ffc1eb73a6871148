"""Which catalog tools the model sees right now, and why each one is there.

The reason matters beyond display: a tool the user chose (all mode, pinned, core set, an
``alwaysLoad`` server) runs without asking, while one the agent loaded itself asks the user
once. Denied tools are never exposed, in any mode: hiding them saves the model a call that
could only be refused.

Sizes are estimated as characters / 4, the same estimate the context benchmark reports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from bassi.core.registry import Registry, ToolNotFoundError
from bassi.core.settings import Settings, ToolsMode
from bassi.core.tools import ToolInfo

CHARS_PER_TOKEN = 4


class Reason(StrEnum):
    """Why a tool is exposed, strongest first (a pinned core tool is reported as pinned)."""

    ALL_MODE = "all mode"
    PINNED = "pinned"
    ALWAYS_LOAD = "alwaysLoad server"
    CORE = "core set"
    LOADED = "loaded by the agent"


USER_CHOSEN = frozenset({Reason.ALL_MODE, Reason.PINNED, Reason.ALWAYS_LOAD, Reason.CORE})
"""Reasons that mean the user (not the agent) put the tool in front of the model."""


class Exposure(NamedTuple):
    """The figures the status bar shows (a tuple, so it unpacks too)."""

    exposed: int
    pinned: int
    mode: ToolsMode
    """The effective mode, ``all`` or ``progressive`` (never ``auto``)."""


def estimate_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def definition_chars(tool: ToolInfo) -> int:
    """Size of the definition the CLI sends the model for this tool."""
    return len(
        json.dumps(
            {
                "name": tool.qualified_name,
                "description": tool.description,
                "input_schema": dict(tool.input_schema),
            },
            ensure_ascii=False,
        )
    )


class ToolExposure:
    """The live exposed set. It reads pins and denial through callables so it always
    agrees with the permission state without keeping a copy of it."""

    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        *,
        pins: Callable[[], Collection[str]],
        is_denied: Callable[[str], bool],
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._pins = pins
        self._is_denied = is_denied
        self._loaded: set[str] = set()
        self._total_tokens: int | None = None
        self._core: frozenset[str] | None = None
        registry.subscribe(self._forget_derived)

    @property
    def mode(self) -> ToolsMode:
        if self._settings.tools_mode is not ToolsMode.AUTO:
            return self._settings.tools_mode
        if self.total_tokens() > self._settings.tools_token_budget:
            return ToolsMode.PROGRESSIVE
        return ToolsMode.ALL

    def total_tokens(self) -> int:
        """Estimated tokens of every available, not denied tool definition: what ``all``
        mode would send."""
        if self._total_tokens is None:
            chars = sum(
                definition_chars(t)
                for t in self._registry.tools(available_only=True)
                if not self._is_denied(t.qualified_name)
            )
            self._total_tokens = estimate_tokens(chars)
        return self._total_tokens

    def reason(self, tool: ToolInfo) -> Reason | None:
        """Why the model sees ``tool`` now, or None when it does not."""
        return self._view().reason(tool)

    def tools(self, server: str | None = None) -> list[ToolInfo]:
        """The exposed tools, in catalog order, of one server or of all."""
        if server is None:
            candidates = self._registry.tools(available_only=True)
        else:
            try:
                candidates = list(self._registry.server(server).tools)
            except KeyError:
                return []
        view = self._view()
        return [t for t in candidates if view.reason(t) is not None]

    def snapshot(self) -> dict[str, frozenset[str]]:
        """Exposed tool names per server: comparing two snapshots says which servers the
        CLI must list again."""
        view = self._view()
        return {
            entry.name: frozenset(t.name for t in entry.tools if view.reason(t) is not None)
            for entry in self._registry.servers()
        }

    def load(self, tools: Iterable[ToolInfo]) -> list[ToolInfo]:
        """Expose tools for the rest of this session; returns the ones that became visible
        (denied and unavailable tools never do)."""
        view = self._view()
        added = []
        for tool in tools:
            name = tool.qualified_name
            if name not in self._loaded and view.reason(tool) is None and view.exposable(tool):
                self._loaded.add(name)
                added.append(tool)
        return added

    def reset_loaded(self) -> None:
        """A new conversation starts with only what the user chose."""
        self._loaded.clear()

    def summary(self) -> Exposure:
        pins = self._pins()
        exposed = self.tools()
        return Exposure(
            exposed=len(exposed),
            pinned=sum(1 for t in exposed if t.qualified_name in pins),
            mode=self.mode,
        )

    def _core_tools(self) -> frozenset[str]:
        """The configured core set, resolved against the catalog once per catalog change."""
        if self._core is None:
            core = set()
            for ref in self._settings.core_tools:
                try:
                    core.add(self._registry.resolve(ref).qualified_name)
                except ToolNotFoundError:
                    continue
            self._core = frozenset(core)
        return self._core

    def _view(self) -> _View:
        return _View(
            self._registry,
            self._is_denied,
            frozenset(self._loaded),
            self.mode,
            frozenset(self._pins()),
            self._core_tools(),
        )

    def _forget_derived(self, _server: str) -> None:
        self._total_tokens = None
        self._core = None


@dataclass(frozen=True, slots=True)
class _View:
    """The inputs of one exposure decision, gathered once for a whole listing."""

    registry: Registry
    is_denied: Callable[[str], bool]
    loaded: frozenset[str]
    mode: ToolsMode
    pins: frozenset[str]
    core: frozenset[str]

    def exposable(self, tool: ToolInfo) -> bool:
        """Whether anything may put the tool in front of the model: never when its server
        is down or a rule denies it."""
        return self.registry.is_available(tool) and not self.is_denied(tool.qualified_name)

    def reason(self, tool: ToolInfo) -> Reason | None:
        if not self.exposable(tool):
            return None
        name = tool.qualified_name
        if self.mode is ToolsMode.ALL:
            return Reason.ALL_MODE
        if name in self.pins:
            return Reason.PINNED
        if self.registry.server(tool.server).always_load:
            return Reason.ALWAYS_LOAD
        if name in self.core:
            return Reason.CORE
        if name in self.loaded:
            return Reason.LOADED
        return None
