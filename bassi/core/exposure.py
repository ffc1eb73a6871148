"""Which catalog tools the model sees right now, and why each one is there: the "visible"
half of the access policy (``bassi.core.policy``).

Visibility is about the size of the model's context only: a visible tool is not an allowed
one, whatever the reason it is visible; whether a call runs without asking is the policy's
``decide``. Some tools are never visible, in any mode: denied ones (hiding them saves the
model a call that could only be refused), ones whose server is not connected, and ones whose
name cannot reach the model as exactly that tool (see ``bassi.core.names``).

Sizes are estimated as characters / 4, the same estimate the context benchmark reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from bassi.core.grants import Grants
from bassi.core.names import ServerNames
from bassi.core.permissions import PermissionRules, Rule
from bassi.core.registry import Registry, ServerEntry, ToolNotFoundError
from bassi.core.settings import Settings, ToolsMode
from bassi.core.tools import ToolInfo, qualified_name, split_qualified

CHARS_PER_TOKEN = 4


class Reason(StrEnum):
    """Why a tool is visible, strongest first (a pinned core tool is reported as pinned)."""

    ALL_MODE = "all mode"
    PINNED = "pinned"
    ALWAYS_LOAD = "alwaysLoad server"
    CORE = "core set"
    LOADED = "loaded by the agent"


class Exposure(NamedTuple):
    """The figures the status bar shows (a tuple, so it unpacks too)."""

    exposed: int
    pinned: int
    mode: ToolsMode
    """The effective mode, ``all`` or ``progressive`` (never ``auto``)."""


def estimate_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


class ToolExposure:
    """The live visible set. It reads pins from the grants and deny rules from the rules, so
    it always agrees with them without keeping a copy."""

    def __init__(
        self, registry: Registry, settings: Settings, grants: Grants, rules: PermissionRules
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._grants = grants
        self._rules = rules
        self._loaded: set[str] = set()
        self._chars: dict[str, int] = {}
        """Per server, the size of its allowed tool definitions, worked out once per change
        of that server: summing every tool again at each server's change is quadratic in a
        big catalog's start-up, on the event loop."""
        self._core: frozenset[str] | None = None
        self._names: dict[str, ServerNames] = {}
        registry.subscribe(self._forget_derived)

    def names(self, server: str) -> ServerNames:
        """The model-facing names of one server's tools, worked out once per change."""
        names = self._names.get(server)
        if names is None:
            try:
                tools = self._registry.server(server).tools
            except KeyError:
                tools = ()
            names = self._names[server] = ServerNames(server, [t.name for t in tools])
        return names

    def model_name(self, tool: ToolInfo) -> str | None:
        """``mcp__<server>__<name>`` as the model calls ``tool``; None when it cannot."""
        name = self.names(tool.server).model_name(tool.name)
        return qualified_name(tool.server, name) if name is not None else None

    def denied_by(self, tool: ToolInfo) -> Rule | None:
        """The deny rule naming ``tool`` by either of its names, if any."""
        names = [tool.qualified_name]
        if (model := self.model_name(tool)) and model != tool.qualified_name:
            names.append(model)
        return self._rules.denied_by(names)

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
        return estimate_tokens(sum(self._server_chars(e) for e in self._registry.servers()))

    def _server_chars(self, entry: ServerEntry) -> int:
        if not entry.available:
            return 0
        chars = self._chars.get(entry.name)
        if chars is None:
            chars = sum(t.definition_chars for t in entry.tools if self.denied_by(t) is None)
            self._chars[entry.name] = chars
        return chars

    def reason(self, tool: ToolInfo) -> Reason | None:
        """Why the model sees ``tool`` now, or None when it does not."""
        return self._view().reason(tool)

    def tools(self, server: str | None = None) -> list[ToolInfo]:
        """The visible tools, in catalog order, of one server or of all."""
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
        """Visible tool names per server: comparing two snapshots says which servers the
        CLI must list again."""
        view = self._view()
        return {
            entry.name: frozenset(t.name for t in entry.tools if view.reason(t) is not None)
            for entry in self._registry.servers()
        }

    def load(self, tools: Iterable[ToolInfo]) -> list[ToolInfo]:
        """Make tools visible for the rest of this session; returns the ones that became
        visible (denied, unavailable and unnameable tools never do)."""
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
        view = self._view()
        exposed = self.tools() if view.mode is ToolsMode.ALL else view.chosen()
        return Exposure(
            exposed=len(exposed),
            pinned=sum(1 for t in exposed if t.qualified_name in view.pins),
            mode=view.mode,
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
            self,
            self._registry,
            frozenset(self._loaded),
            self.mode,
            frozenset(self._grants.pins),
            self._core_tools(),
        )

    def _forget_derived(self, server: str) -> None:
        self._chars.pop(server, None)
        self._core = None
        self._names.pop(server, None)


@dataclass(frozen=True, slots=True)
class _View:
    """The inputs of one visibility decision, gathered once for a whole listing."""

    exposure: ToolExposure
    registry: Registry
    loaded: frozenset[str]
    mode: ToolsMode
    pins: frozenset[str]
    core: frozenset[str]

    def exposable(self, tool: ToolInfo) -> bool:
        """Whether anything may put the tool in front of the model: never when its server
        is down, a rule denies it, or its name cannot reach the model as this tool."""
        return (
            self.registry.is_available(tool)
            and self.exposure.names(tool.server).model_name(tool.name) is not None
            and self.exposure.denied_by(tool) is None
        )

    def reason(self, tool: ToolInfo) -> Reason | None:
        """Why the tool is in front of the model, if it is. What chose it is looked up
        first: in progressive mode that settles most of a big catalog without the costlier
        checks of ``exposable`` (the status bar asks about every tool at every server's
        change)."""
        chosen = self._chosen_by(tool)
        return chosen if chosen is not None and self.exposable(tool) else None

    def chosen(self) -> list[ToolInfo]:
        """The visible tools in progressive mode, found from what chose them (pins, the core
        set, loads, alwaysLoad servers) instead of by asking about every tool in the catalog:
        the status bar counts them at each server's change, and with ten thousand tools the
        full walk held the screen for tens of milliseconds each time."""
        found = {
            t.qualified_name: t
            for entry in self.registry.servers()
            if entry.always_load and entry.available
            for t in entry.tools
        }
        for name in (*self.pins, *self.core, *self.loaded):
            parts = split_qualified(name)
            if name not in found and parts and (tool := self.registry.get(*parts)) is not None:
                found[name] = tool
        return [t for t in found.values() if self.reason(t) is not None]

    def _chosen_by(self, tool: ToolInfo) -> Reason | None:
        if self.mode is ToolsMode.ALL:
            return Reason.ALL_MODE
        name = tool.qualified_name
        if name in self.pins:
            return Reason.PINNED
        if self.registry.is_available(tool) and self.registry.server(tool.server).always_load:
            return Reason.ALWAYS_LOAD
        if name in self.core:
            return Reason.CORE
        if name in self.loaded:
            return Reason.LOADED
        return None
