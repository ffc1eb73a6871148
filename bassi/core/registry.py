"""The catalog of every server bassi knows and every tool they announced.

The registry is plain state with change notifications: discovery writes into it, and the
index, the agent bridge and the UI read from it and listen for changes. It does no I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from bassi.core.offers import PromptInfo, ResourceInfo, ResourceTemplateInfo
from bassi.core.tools import Origin, ToolInfo, split_qualified, split_reference


class ServerStatus(StrEnum):
    PENDING = "pending"
    """From a project's servers file, waiting for the user's approval: never started."""
    CONNECTING = "connecting"
    INSTALLING = "installing"
    """Started through npx/uvx, which is (probably) still downloading the package."""
    CONNECTED = "connected"
    NEEDS_AUTH = "needs sign-in"
    """The server answered 401: someone has to sign in (``/mcp`` or ``bassi mcp login``)."""
    FAILED = "failed"
    DISABLED = "disabled"

    @property
    def starting(self) -> bool:
        """A connection attempt is under way."""
        return self in (ServerStatus.CONNECTING, ServerStatus.INSTALLING)


@dataclass(frozen=True, slots=True)
class ServerEntry:
    name: str
    origin: Origin
    status: ServerStatus = ServerStatus.CONNECTING
    target: str = ""
    """How the server is reached, for display: a command line or a URL."""
    error: str | None = None
    tools: tuple[ToolInfo, ...] = ()
    always_load: bool = False
    schema_problems: Mapping[str, str] = field(default_factory=dict)
    """Tool name -> why its input schema is invalid (its calls go unchecked), for the tools
    whose schema was found invalid so far (see ``bassi.core.validation``)."""
    prompts: tuple[PromptInfo, ...] = ()
    resources: tuple[ResourceInfo, ...] = ()
    templates: tuple[ResourceTemplateInfo, ...] = ()
    warnings: tuple[str, ...] = ()
    """What went wrong without stopping the server (a tool skipped for an invalid schema)."""
    detail: str | None = None
    """What the server is doing right now, for display: "installing @scope/pkg", a retry."""

    @property
    def available(self) -> bool:
        return self.status is ServerStatus.CONNECTED


class ToolNotFoundError(LookupError):
    """A name that matches no tool, or more than one. ``candidates`` are the closest refs
    (``server/tool``), best first, so every caller can say "did you mean ...?"."""

    def __init__(self, name: str, candidates: Sequence[str], *, ambiguous: bool = False) -> None:
        self.name = name
        self.candidates = list(candidates)
        self.ambiguous = ambiguous
        if ambiguous:
            message = f"'{name}' matches several tools: {', '.join(self.candidates)}"
        elif self.candidates:
            message = f"no tool named '{name}'. Closest: {', '.join(self.candidates)}"
        else:
            message = f"no tool named '{name}'"
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class _ServerNames:
    tools: tuple[ToolInfo, ...]
    """The tools these were made from (compared by identity: a change makes a new tuple)."""
    refs: list[str]
    grams: list[frozenset[str]]


Listener = Callable[[str], None]
"""Called with the name of the server whose entry changed."""

NAME_CHARS = 128
"""A name is compared by its first this many characters: the API allows 64 for a whole tool
name, and difflib's cost grows with the product of the two lengths, so a 10 kB name (typed,
or sent by a model) must not reach it whole."""
CANDIDATES = 24
"""How many tools ``closest`` compares closely, picked by shared trigrams: the work per
lookup stays the same at ten tools or ten thousand."""


def _trigrams(text: str) -> frozenset[str]:
    padded = f" {text[:NAME_CHARS].lower()} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


@dataclass
class Registry:
    _servers: dict[str, ServerEntry] = field(default_factory=dict)
    _listeners: list[Listener] = field(default_factory=list)
    _names: dict[str, _ServerNames] = field(default_factory=dict)
    """Per server, the trigrams of its tools' refs, for ``closest``; made when the server's
    tools are set (in proportion to that server's tools, once), not on every lookup."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add_server(
        self,
        name: str,
        origin: Origin,
        *,
        target: str = "",
        always_load: bool = False,
        status: ServerStatus = ServerStatus.CONNECTING,
    ) -> ServerEntry:
        entry = ServerEntry(name, origin, status, target, always_load=always_load)
        self._put(entry)
        return entry

    def set_tools(
        self,
        server: str,
        tools: Iterable[ToolInfo],
        *,
        prompts: Iterable[PromptInfo] = (),
        resources: Iterable[ResourceInfo] = (),
        templates: Iterable[ResourceTemplateInfo] = (),
        warnings: Iterable[str] = (),
    ) -> ServerEntry:
        """Record a successful (re)connection and what the server announced."""
        entry = self.server(server)
        fixed = tuple(
            t
            if (t.server, t.origin) == (server, entry.origin)
            else replace(t, server=server, origin=entry.origin)
            for t in tools
        )
        updated = replace(
            entry,
            status=ServerStatus.CONNECTED,
            error=None,
            detail=None,
            tools=fixed,
            prompts=tuple(prompts),
            resources=tuple(resources),
            templates=tuple(templates),
            warnings=tuple(warnings),
        )
        self._server_names(updated)  # now, not in the first "did you mean" after it
        return self._put(updated)

    def set_schema_problems(self, server: str, problems: Mapping[str, str]) -> ServerEntry:
        """Record which of the server's tools have an invalid input schema; listeners hear
        of it only when that changed."""
        entry = self.server(server)
        if dict(entry.schema_problems) == dict(problems):
            return entry
        return self._put(replace(entry, schema_problems=dict(problems)))

    def set_status(
        self,
        server: str,
        status: ServerStatus,
        error: str | None = None,
        *,
        detail: str | None = None,
    ) -> ServerEntry:
        """Change a server's status. A failed server keeps its tools, shown as unavailable,
        so a crash does not make the catalog forget what the server offers."""
        return self._put(replace(self.server(server), status=status, error=error, detail=detail))

    def forget_offers(self, server: str) -> ServerEntry:
        """Drop a server's tools, prompts and resources (it was disabled): they leave the
        catalog, the index and the model's view, not just become unavailable."""
        return self._put(
            replace(self.server(server), tools=(), prompts=(), resources=(), templates=())
        )

    def prompts(self) -> list[PromptInfo]:
        return [p for e in self.servers() if e.available for p in e.prompts]

    def resources(self) -> list[ResourceInfo]:
        return [r for e in self.servers() if e.available for r in e.resources]

    def templates(self) -> list[ResourceTemplateInfo]:
        return [t for e in self.servers() if e.available for t in e.templates]

    def server(self, name: str) -> ServerEntry:
        try:
            return self._servers[name]
        except KeyError:
            raise KeyError(f"unknown server '{name}'") from None

    def servers(self) -> list[ServerEntry]:
        """In-process servers first, then external ones, each in the order they were added."""
        entries = list(self._servers.values())
        return [e for e in entries if e.origin is Origin.IN_PROCESS] + [
            e for e in entries if e.origin is Origin.EXTERNAL
        ]

    def tools(self, *, available_only: bool = False) -> list[ToolInfo]:
        return [t for e in self.servers() if e.available or not available_only for t in e.tools]

    def is_available(self, tool: ToolInfo) -> bool:
        entry = self._servers.get(tool.server)
        return entry is not None and entry.available

    def get(self, server: str, name: str) -> ToolInfo | None:
        entry = self._servers.get(server)
        if entry is None:
            return None
        return next((t for t in entry.tools if t.name == name), None)

    def resolve(self, name: str) -> ToolInfo:
        """Find a tool by ``mcp__server__tool``, ``server/tool`` or a unique bare name.

        Raises ToolNotFoundError with the closest candidates when the name is unknown or
        ambiguous."""
        name = name.strip()
        parts = split_reference(name)
        if parts is not None:
            found = self.get(*parts)
            if found is not None:
                return found
        else:
            matches = [t for t in self.tools() if t.name == name]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise ToolNotFoundError(name, [t.ref for t in matches], ambiguous=True)
        raise ToolNotFoundError(name, self.closest(name))

    def closest(self, name: str, limit: int = 5) -> list[str]:
        """Refs of the tools whose names look most like ``name`` (typos, wrong server).

        Runs on the UI's loop for every unknown name, so its work is bounded: the name is cut
        to ``NAME_CHARS``, and only the ``CANDIDATES`` tools sharing most trigrams with it are
        compared with difflib."""
        name = name.strip()[:NAME_CHARS]
        parts = split_qualified(name)
        bare = parts[1] if parts else name.rpartition("/")[2]
        wanted = _trigrams(name) | _trigrams(bare)
        # Dice's coefficient on trigrams: shared ones count, relative to both lengths, so a
        # short exact-ish name is not outranked by long names that merely contain its words.
        # Sorting indices by a list's own __getitem__ keeps the per-tool work in C.
        candidates: list[tuple[float, str, str]] = []
        for entry in self.servers():
            names = self._server_names(entry)
            dice = [2 * len(wanted & grams) / (len(wanted) + len(grams)) for grams in names.grams]
            best = sorted(range(len(dice)), key=dice.__getitem__, reverse=True)[:CANDIDATES]
            candidates += [(dice[i], names.refs[i], entry.tools[i].name) for i in best if dice[i]]
        candidates = sorted(candidates, reverse=True)[:CANDIDATES]
        scored: dict[str, float] = {}
        for _dice, ref, tool in candidates:
            score = max(_similarity(name, ref), _similarity(bare, tool))
            if score >= 0.5:
                scored[ref] = score
        return sorted(scored, key=lambda r: (-scored[r], r))[:limit]

    def _server_names(self, entry: ServerEntry) -> _ServerNames:
        names = self._names.get(entry.name)
        if names is None or names.tools is not entry.tools:
            refs = [t.ref for t in entry.tools]
            names = _ServerNames(entry.tools, refs, [_trigrams(r) for r in refs])
            self._names[entry.name] = names
        return names

    def _put(self, entry: ServerEntry) -> ServerEntry:
        self._servers[entry.name] = entry
        for listener in list(self._listeners):
            listener(entry.name)
        return entry


def _similarity(a: str, b: str) -> float:
    a, b = a[:NAME_CHARS].lower(), b[:NAME_CHARS].lower()
    if 2 * min(len(a), len(b)) < 0.5 * (len(a) + len(b)):
        return 0.0  # the ratio can't reach 0.5 (the cut-off) with lengths this far apart
    return difflib.SequenceMatcher(None, a, b).ratio()
