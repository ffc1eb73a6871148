"""The tool index: what the rest of bassi searches.

Each server's tools are analysed into a segment; segments are merged into in-memory postings
that answer queries in a few milliseconds even at 10,000 tools. A server whose tool
definitions hash is unchanged is left alone, so a reconnect re-indexes only what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bassi.core.registry import Registry
from bassi.core.search.documents import definitions_hash
from bassi.core.search.postings import Postings, Segment
from bassi.core.search.query import parse
from bassi.core.tools import ToolInfo

_EXACT_BONUS = 1e6


@dataclass(frozen=True, slots=True)
class SearchHit:
    tool: ToolInfo
    score: float
    matched_terms: tuple[str, ...]
    """The query's words (lowercased, as typed) that matched this tool, for highlighting."""


@dataclass(frozen=True, slots=True)
class _Server:
    digest: str
    tools: tuple[ToolInfo, ...]
    segment: Segment


class ToolIndex:
    def __init__(self, cache_dir: Path | None = None) -> None:
        self._cache_dir = cache_dir
        self._servers: dict[str, _Server] = {}
        self._tools: list[ToolInfo] = []
        self._servers_of: np.ndarray = np.zeros(0, dtype=np.int32)
        self._server_ids: dict[str, int] = {}
        self._names: dict[str, list[int]] = {}
        self._postings = Postings([])

    def __len__(self) -> int:
        return len(self._tools)

    def update_server(self, server: str, tools: Sequence[ToolInfo]) -> bool:
        """Replace a server's tools. False (and nothing done) when they are unchanged."""
        digest = definitions_hash(tools)
        current = self._servers.get(server)
        if current is not None and current.digest == digest:
            return False
        self._servers[server] = _Server(digest, tuple(tools), Segment.build(tools))
        self._rebuild()
        return True

    def remove_server(self, server: str) -> None:
        if self._servers.pop(server, None) is not None:
            self._rebuild()

    def sync(self, registry: Registry) -> None:
        """Match the registry: changed servers re-indexed, vanished ones dropped."""
        entries = registry.servers()
        changed = False
        for entry in entries:
            digest = definitions_hash(entry.tools)
            current = self._servers.get(entry.name)
            if current is None or current.digest != digest:
                self._servers[entry.name] = _Server(digest, entry.tools, Segment.build(entry.tools))
                changed = True
        names = {e.name for e in entries}
        for gone in [s for s in self._servers if s not in names]:
            del self._servers[gone]
            changed = True
        if changed:
            self._rebuild()

    def _rebuild(self) -> None:
        servers = list(self._servers.items())
        self._postings = Postings([s.segment for _, s in servers])
        self._tools = [t for _, s in servers for t in s.tools]
        self._server_ids = {name.lower(): i for i, (name, _) in enumerate(servers)}
        self._servers_of = np.repeat(
            np.arange(len(servers), dtype=np.int32), [len(s.tools) for _, s in servers]
        )
        names: dict[str, list[int]] = {}
        for i, tool in enumerate(self._tools):
            names.setdefault(tool.name.lower(), []).append(i)
            names.setdefault(f"{tool.server}/{tool.name}".lower(), []).append(i)
        self._names = names

    def search(self, query: str, *, limit: int = 10, server: str | None = None) -> list[SearchHit]:
        parsed = parse(query)
        wanted = (server or parsed.server or "").lower() or None
        if limit <= 0 or not self._tools or (not parsed.terms and not parsed.name_forms):
            return []
        if wanted is not None and wanted not in self._server_ids:
            return []
        scores = np.zeros(len(self._tools), dtype=np.float32)
        per_term: list[tuple[str, np.ndarray]] = []
        for term in parsed.terms:
            found = self._postings.lookup(term.stem)
            if found is None:
                continue
            docs, weights = found
            scores[docs] += weights
            per_term.append((term.surface, docs))
        for form in parsed.name_forms:
            for i in self._names.get(form, ()):
                scores[i] += _EXACT_BONUS
        if wanted is not None:
            scores[self._servers_of != self._server_ids[wanted]] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
        ranked = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
        return [SearchHit(self._tools[i], float(scores[i]), _matched(i, per_term)) for i in ranked]


def _matched(doc: int, per_term: list[tuple[str, np.ndarray]]) -> tuple[str, ...]:
    out: list[str] = []
    for surface, docs in per_term:
        at = int(np.searchsorted(docs, doc))
        if at < len(docs) and docs[at] == doc and surface not in out:
            out.append(surface)
    return tuple(out)
