"""The tool index: what the rest of bassi searches.

Each server's tools are analysed into a segment; segments are merged into in-memory postings
that answer queries in a few milliseconds even at 10,000 tools. A server whose tool
definitions hash is unchanged is left alone, so a reconnect re-indexes only what changed.

Word matching is fused with a sentence encoder's similarity, which finds requests that share
no word with their tool. Tool vectors arrive from a background worker (``ToolVectors``): the
index is searchable by words at once, and each server's tools join the fused ranking as soon
as their vectors are ready. The index itself is not thread-safe and is used from one thread
(the event loop); the worker never touches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bassi.core.registry import Registry
from bassi.core.search import analysis
from bassi.core.search.actions import (
    action_factors,
    is_verb,
    name_objects,
    query_action,
    tool_actions,
)
from bassi.core.search.documents import definitions_hash
from bassi.core.search.encoder import SentenceEncoder, default_encoder, known_words
from bassi.core.search.half_rows import HalfRows
from bassi.core.search.postings import Floats, Postings, Segment
from bassi.core.search.query import parse
from bassi.core.search.store import SegmentStore
from bassi.core.search.tool_vectors import ToolVectors
from bassi.core.search.typos import Corrector
from bassi.core.search.vocabulary import Concept, default_vocabulary
from bassi.core.tools import ToolInfo

_EXACT_BONUS = 1e6
SYNONYM_WEIGHT = 0.6
"""How much a stand-in from the vocabulary counts against the word typed."""
TYPO_WEIGHT = 0.8
VERB_WEIGHT = 0.5
"""How much an action word counts as a term: tools sharing the verb are already preferred by
the action match, and a verb inside a name (``git_show``, ``get-calendar-view``) says little
about the thing asked for."""
ENCODER_WEIGHT = 2.0
"""Sentence-encoder similarity against the lexical score scaled to 1 (see
``bench/fusion_grid.py``)."""
ENCODER_FLOOR = 0.2
"""Cosine that counts as no similarity: unrelated texts sit around 0.1-0.2, not 0."""
LISTING_COSINE = 0.25
"""A tool no query word reaches is listed only from this cosine on, so nonsense queries
still find nothing: "banana bread recipe" or "qwzx vbnm" reach at most 0.24 with any of the
benchmark's 322 tools, while a request's right tool has a median of 0.46."""
PHRASE_WEIGHT = 1.0
"""How much saying one of a tool's alias phrasings word for word adds, on top of its words."""
UNSAID_PENALTY = 0.05
"""Score divisor step per thing a tool's name acts on that the request does not mention."""


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


@dataclass(slots=True)
class IndexStats:
    """Cumulative counts of how servers entered the index: the way to see that an unchanged
    server was neither re-analysed nor rewritten, nor its vectors computed again. The vector
    counts are written by the background worker."""

    analysed: int = 0
    from_cache: int = 0
    vectors_computed: int = 0
    """Servers whose tool vectors the model computed (the rest came from the disk cache)."""
    vectors_from_cache: int = 0


class ToolIndex:
    """Every tool of every server, searchable.

    ``cache_dir`` holds the on-disk Whoosh index (e.g. ``<project>/.bassi/index``); with None
    the index lives in memory only."""

    def __init__(
        self, cache_dir: Path | None = None, *, encoder: SentenceEncoder | None = None
    ) -> None:
        self._store = SegmentStore(cache_dir) if cache_dir is not None else None
        self._servers: dict[str, _Server] = {}
        self._tools: list[ToolInfo] = []
        self._servers_of: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._actions: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)
        self._object_ids: dict[str, int] = {}
        self._object_terms: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._object_docs: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._server_ids: dict[str, int] = {}
        self._names: dict[str, list[int]] = {}
        self._postings = Postings([])
        self._vocabulary = default_vocabulary()
        self._corrector = Corrector(())
        self.stats = IndexStats()
        self._vectors = ToolVectors(
            encoder if encoder is not None else default_encoder(),
            cache_dir.parent / f"{cache_dir.name}-vectors" if cache_dir is not None else None,
            self.stats,
        )
        self._meaning_generation = -1
        self._meaning: HalfRows | None = None

    def __len__(self) -> int:
        return len(self._tools)

    def wait_semantic(self, timeout: float | None = None) -> bool:
        """Block until every tool's vector is ready and the model is loaded, so searches are
        fused (True), or ``timeout`` seconds pass or the model cannot run (False). For
        benchmarks, tests and one-shot command-line searches; the app never waits."""
        return self._vectors.wait(timeout)

    @property
    def semantic_ready(self) -> bool:
        """Whether searches right now are fused for every tool (never blocks)."""
        return self._vectors.wait(0)

    def update_server(self, server: str, tools: Sequence[ToolInfo]) -> bool:
        """Replace a server's tools. False (and nothing done) when they are unchanged."""
        changed = self._apply({server: tuple(tools)}, removed=())
        return bool(changed)

    def remove_server(self, server: str) -> None:
        if server in self._servers:
            self._apply({}, removed=(server,))

    def sync(self, registry: Registry) -> None:
        """Match the registry: changed servers re-indexed, vanished ones dropped."""
        entries = registry.servers()
        names = {e.name for e in entries}
        self._apply(
            {e.name: e.tools for e in entries},
            removed=tuple(s for s in self._servers if s not in names),
            keep_on_disk=names,
        )

    def _apply(
        self,
        servers: dict[str, tuple[ToolInfo, ...]],
        removed: Sequence[str],
        keep_on_disk: set[str] | None = None,
    ) -> list[str]:
        """Bring the given servers up to date (from the disk cache when it has their digest,
        else by analysing them), drop ``removed``, persist what was analysed, and rebuild the
        in-memory postings once. With ``keep_on_disk``, cached servers outside it are dropped
        from the disk cache too. A server without tools (still connecting, say) is indexed as
        empty but never overwrites its cached tools. Returns the servers that changed."""
        digests = {name: definitions_hash(tools) for name, tools in servers.items()}
        stale = {
            name: digest
            for name, digest in digests.items()
            if name not in self._servers or self._servers[name].digest != digest
        }
        if not stale and not removed:
            return []
        cached, on_disk = self._store.load(stale) if self._store is not None else ({}, set())
        analysed: dict[str, tuple[str, Segment]] = {}
        for name, digest in stale.items():
            tools = servers[name]
            segment = cached.get(name)
            if segment is not None and segment.tools == tuple(t.name for t in tools):
                self.stats.from_cache += 1
            else:
                segment = Segment.build(tools)
                self.stats.analysed += 1
                if tools:
                    analysed[name] = (digest, segment)
            self._servers[name] = _Server(digest, tools, segment)
        for name in removed:
            self._servers.pop(name, None)
        self._rebuild()
        forgotten = {*removed, *(on_disk - keep_on_disk if keep_on_disk is not None else ())}
        if self._store is not None and (analysed or forgotten):
            self._store.save(analysed, forgotten)
        self._vectors.request({name: (digest, servers[name]) for name, digest in stale.items()})
        if removed or keep_on_disk is not None:
            self._vectors.forget(removed, keep_on_disk=keep_on_disk)
        return [*stale, *removed]

    def _rebuild(self) -> None:
        servers = list(self._servers.items())
        self._postings = Postings([s.segment for _, s in servers])
        self._tools = [t for _, s in servers for t in s.tools]
        self._server_ids = {name.lower(): i for i, (name, _) in enumerate(servers)}
        self._servers_of = np.repeat(
            np.arange(len(servers), dtype=np.int32), [len(s.tools) for _, s in servers]
        )
        self._actions = tool_actions([t.name for t in self._tools])
        object_ids: dict[str, int] = {}
        object_terms: list[int] = []
        object_docs: list[int] = []
        for i, tool in enumerate(self._tools):
            for word in dict.fromkeys(name_objects(tool.name, tool.server)):
                object_terms.append(object_ids.setdefault(word, len(object_ids)))
                object_docs.append(i)
        self._object_ids = object_ids
        self._object_terms = np.array(object_terms, dtype=np.int32)
        self._object_docs = np.array(object_docs, dtype=np.int32)
        names: dict[str, list[int]] = {}
        for i, tool in enumerate(self._tools):
            names.setdefault(tool.name.lower(), []).append(i)
            names.setdefault(f"{tool.server}/{tool.name}".lower(), []).append(i)
        self._names = names
        self._meaning_generation = -1
        self._corrector = Corrector(
            [*self._postings.vocabulary, *(s for k in self._vocabulary.expansions for s in k)]
        )

    def search(self, query: str, *, limit: int = 10, server: str | None = None) -> list[SearchHit]:
        """The best ``limit`` tools for ``query``, best first. Never raises on any text."""
        parsed = parse(query, self._vocabulary, SYNONYM_WEIGHT)
        wanted = (server or parsed.server or "").lower() or None
        if limit <= 0 or not self._tools or (not parsed.concepts and not parsed.name_forms):
            return []
        if wanted is not None and wanted not in self._server_ids:
            return []
        request = query_action(parsed.text)
        lexical = np.zeros(len(self._tools), dtype=np.float32)
        matched: list[tuple[tuple[str, ...], Floats]] = []
        for concept in parsed.concepts:
            vector = self._concept_scores(concept)
            if vector is not None:
                if concept.surfaces == (request.verb,) or is_verb(concept.members[0][0]):
                    vector *= VERB_WEIGHT
                lexical += vector
                matched.append((concept.surfaces, vector))
        typed = analysis.stems(parsed.text)
        for pair in dict.fromkeys(f"{a} {b}" for a, b in pairwise(typed)):
            found = self._postings.lookup(pair)
            if found is not None:
                lexical[found[0]] += PHRASE_WEIGHT * found[1]
        scores = self._fuse(lexical, parsed.text) * action_factors(request.action, self._actions)
        scores *= self._specificity(parsed.concepts)
        for form in parsed.name_forms:
            for i in self._names.get(form, ()):
                scores[i] += _EXACT_BONUS
        if wanted is not None:
            scores[self._servers_of != self._server_ids[wanted]] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
        ranked = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
        return [
            SearchHit(
                self._tools[i],
                float(scores[i]),
                tuple(dict.fromkeys(w for ws, v in matched if v[i] > 0 for w in ws)),
            )
            for i in ranked
        ]

    def _specificity(self, concepts: Sequence[Concept]) -> Floats:
        """Per tool, a small penalty for each thing its name acts on that the request never
        mentions: "add a task" wants ``create-todo-task`` more than ``create-todo-task-list``,
        "forward the email" the mail tool more than ``forward-calendar-event``."""
        said = {
            self._object_ids[s]
            for concept in concepts
            for stems, _ in concept.members
            for s in stems
            if s in self._object_ids
        }
        unsaid = (
            ~np.isin(self._object_terms, list(said))
            if said
            else np.ones(len(self._object_terms), dtype=bool)
        )
        counts = np.bincount(self._object_docs[unsaid], minlength=len(self._tools))
        out: Floats = (1.0 / (1.0 + UNSAID_PENALTY * counts)).astype(np.float32)
        return out

    def _fuse(self, lexical: Floats, text: str) -> Floats:
        """Lexical score (scaled to the best tool's) plus weighted encoder similarity above
        its floor. Before the vectors are ready, the lexical score alone."""
        best = float(lexical.max()) if len(lexical) else 0.0
        fused = lexical / best if best > 0 else lexical.copy()
        meaning = self._tool_vectors()
        query = self._vectors.encode_query(text) if meaning is not None else None
        if meaning is None or query is None:
            return fused
        cosine = meaning.dot(query)
        fused += ENCODER_WEIGHT * np.maximum(cosine - ENCODER_FLOOR, 0.0)
        fused[(lexical <= 0) & (cosine < LISTING_COSINE)] = 0.0
        out: Floats = fused.astype(np.float32, copy=False)
        return out

    def _tool_vectors(self) -> HalfRows | None:
        """Every tool's vector in index order (zeros for servers still waiting), gathered
        again when the worker has published more since the last search; None before any.
        Gathering only refers to the worker's arrays, so a swap never copies a vector."""
        generation = self._vectors.generation
        if generation != self._meaning_generation:
            blocks = []
            row = 0
            for name, server in self._servers.items():
                vectors = self._vectors.get(name, server.digest)
                if vectors is not None and len(vectors):
                    blocks.append((row, vectors))
                row += len(server.tools)
            self._meaning = HalfRows(blocks, row) if blocks else None
            self._meaning_generation = generation
        return self._meaning

    def _concept_scores(self, concept: Concept) -> Floats | None:
        """Per tool, the best-scoring way the tool says what the concept means. Taking the
        best (not the sum) keeps a tool that uses three synonyms from outranking one that
        uses the very word typed."""
        size = len(self._tools)
        vector = np.zeros(size, dtype=np.float32)
        found_any = False
        members = list(concept.members)
        own = members[0][0]
        typed = concept.surfaces[0]
        if (
            len(own) == 1
            and len(members) == 1
            and own[0] not in self._corrector
            and typed not in known_words()
        ):
            members += [((fix,), TYPO_WEIGHT) for fix in self._corrector.corrections(own[0])]
        for stems, weight in members:
            if len(stems) == 1:
                found = self._postings.lookup(stems[0])
                if found is not None:
                    docs, weights = found
                    vector[docs] = np.maximum(vector[docs], weight * weights)
                    found_any = True
                continue
            phrase = np.zeros(size, dtype=np.float32)
            for part in stems:
                found = self._postings.lookup(part)
                if found is not None:
                    phrase[found[0]] += found[1]
                    found_any = True
            np.maximum(vector, phrase * (weight / len(stems)), out=vector)
        return vector if found_any else None
