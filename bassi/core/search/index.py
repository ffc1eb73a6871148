"""The tool index: what the rest of bassi searches.

Each server's tools are analysed into a segment; segments are merged into in-memory postings
that answer queries in a few milliseconds even at 10,000 tools. A server whose tool
definitions hash is unchanged is left alone, so a reconnect re-indexes only what changed.
Every tool is also a document in the Whoosh index of record (``records.py``), which answers
the fielded filters people type.

Updates build a new immutable ``_View`` and swap it in with one assignment, so a search
always sees one consistent state. ``submit`` hands an update to a background thread (the
app's path: a connecting server never costs the event loop its indexing); ``update_server``
and ``sync`` apply at once in the caller's thread (tests, benchmarks, one-shot commands).

Word matching is fused with a sentence encoder's similarity, which finds requests that share
no word with their tool (``fusion.py`` says how). Tool vectors arrive from another background
worker (``ToolVectors``): the index is searchable by words at once, and each server's tools
join the fused ranking as soon as their vectors are ready.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bassi.core import foreground
from bassi.core.registry import Registry
from bassi.core.search.analysis import stem
from bassi.core.search.documents import definitions_hash
from bassi.core.search.encoder import SentenceEncoder, default_encoder, known_words
from bassi.core.search.fusion import Signals, fuse
from bassi.core.search.half_rows import HalfRows
from bassi.core.search.postings import Floats, Postings, Segment
from bassi.core.search.query import ParsedQuery, parse
from bassi.core.search.records import QueryProblem, ToolRecords
from bassi.core.search.segment_cache import SegmentCache
from bassi.core.search.tool_vectors import ToolVectors
from bassi.core.search.typos import Corrector, english_corrections
from bassi.core.search.verbs import is_verb
from bassi.core.search.vocabulary import Concept, default_vocabulary
from bassi.core.tools import ToolInfo

log = logging.getLogger(__name__)

SYNONYM_WEIGHT = 0.6
"""How much a stand-in from the vocabulary counts against the word typed."""
TYPO_WEIGHT = 0.8


@dataclass(frozen=True, slots=True)
class SearchHit:
    tool: ToolInfo
    score: float
    """0-1, comparable between queries: 1 for an exact name, else how well the request's
    words and meaning fit the tool (``fusion.py``)."""
    matched_terms: tuple[str, ...]
    """The query's words (lowercased, as typed) that matched this tool, for highlighting."""
    weak: bool = False
    """The fit is poor: shown, but not to be trusted (``fusion.WEAK``)."""
    signals: Signals | None = None
    """Why it ranks where it does, for ``--explain``."""


@dataclass(frozen=True, slots=True)
class Found:
    """A search's answer: the hits, and what a person should know about them."""

    hits: list[SearchHit]
    problem: str | None = None
    """Why the query's filter could not be read (then there are no hits)."""
    filtered: bool = False
    """The query had a filter (fielded terms, a phrase, NOT)."""
    indexing: tuple[str, ...] = ()
    """Servers whose tools are still being indexed: missing from these hits for now."""
    relaxed: str | None = None
    """Why the query's phrases and wildcards were read as plain words (no tool fit them),
    for people; None when they were not."""


@dataclass(frozen=True, slots=True)
class _Server:
    """One server's tools and their analysed words, kept per definition: a view is built
    again over every server at each change, from these, without analysing anything again."""

    digest: str
    tools: tuple[ToolInfo, ...]
    segment: Segment


@dataclass(frozen=True, slots=True)
class _View:
    """Everything a search reads, built whole by an update and never changed after."""

    servers: tuple[tuple[str, _Server], ...]
    tools: tuple[ToolInfo, ...]
    postings: Postings
    servers_of: npt.NDArray[np.int32]
    server_ids: dict[str, int]
    names: dict[str, list[int]]
    refs: dict[str, int]
    corrector: Corrector

    @classmethod
    def build(cls, servers: dict[str, _Server], extra_words: Sequence[str]) -> _View:
        items = tuple(servers.items())
        tools = tuple(t for _, s in items for t in s.tools)
        names: dict[str, list[int]] = {}
        for i, tool in enumerate(tools):
            foreground.give_way()
            names.setdefault(tool.name.lower(), []).append(i)
            names.setdefault(f"{tool.server}/{tool.name}".lower(), []).append(i)
        postings = Postings([s.segment for _, s in items])
        return cls(
            servers=items,
            tools=tools,
            postings=postings,
            servers_of=np.repeat(
                np.arange(len(items), dtype=np.int32), [len(s.tools) for _, s in items]
            ),
            server_ids={name.lower(): i for i, (name, _) in enumerate(items)},
            names=names,
            refs={t.ref: i for i, t in enumerate(tools)},
            corrector=Corrector([*postings.vocabulary, *extra_words]),
        )


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


@dataclass(slots=True)
class _Queue:
    """Updates handed to the background updater, coalesced per server (the newest wins)."""

    servers: dict[str, tuple[ToolInfo, ...]] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    retain: set[str] | None = None
    busy: tuple[str, ...] = ()
    """Servers the updater is working on, not yet searchable as submitted."""
    leaving: frozenset[str] = frozenset()
    """Of those, the ones it is taking out: searches leave their tools out already."""

    def withdrawn(self) -> set[str]:
        """Servers whose tools no search may offer any more (a disabled server's tools must
        not be offered a moment longer), though the view still holds them."""
        return self.removed | self.leaving

    def settle(self) -> None:
        """What the updater was busy with is in the view."""
        self.busy, self.leaving = (), frozenset()


class ToolIndex:
    """Every tool of every server, searchable.

    ``cache_dir`` holds the on-disk Whoosh index of record (the app's is in the user's cache,
    ``Settings.project_cache_dir``: Whoosh unpickles what it reads, so never a directory a
    repository could fill) with the analysed servers and tool vectors beside it; with None
    everything lives in memory. With ``helpers`` (the app's index), the index of record is
    written and the tool vectors are computed by helper processes, away from the screen's
    interpreter and at the least CPU weight."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        encoder: SentenceEncoder | None = None,
        helpers: bool = False,
    ) -> None:
        self._segments = (
            SegmentCache(cache_dir.parent / f"{cache_dir.name}-segments") if cache_dir else None
        )
        self.records = ToolRecords(cache_dir, in_helper=helpers)
        self._servers: dict[str, _Server] = {}
        self._vocabulary = default_vocabulary()
        self._extra_words = [s for k in self._vocabulary.expansions for s in k]
        self._view = _View.build({}, ())
        self.stats = IndexStats()
        self._vectors = ToolVectors(
            encoder if encoder is not None else default_encoder(),
            cache_dir.parent / f"{cache_dir.name}-vectors" if cache_dir is not None else None,
            self.stats,
            in_helper=helpers,
        )
        self._meaning: tuple[int, _View, HalfRows | None] = (-1, self._view, None)
        self._apply_lock = threading.Lock()
        self._queue = _Queue()
        self._queued = threading.Condition()
        self._updater: threading.Thread | None = None

    def __len__(self) -> int:
        return len(self._view.tools)

    # --- readiness ------------------------------------------------------------------------

    def wait_semantic(self, timeout: float | None = None) -> bool:
        """Block until every tool's vector is ready and the model is loaded, so searches are
        fused (True), or ``timeout`` seconds pass or the model cannot run (False). For
        benchmarks, tests and one-shot command-line searches; the app never waits."""
        return self.wait_indexed(timeout) and self._vectors.wait(timeout)

    @property
    def semantic_ready(self) -> bool:
        """Whether searches right now are fused for every tool (never blocks)."""
        return not self.indexing and self._vectors.ready

    def prepare_queries(self) -> None:
        """Load the model that turns a request into its vector, in the background. Until then
        a search ranks by words alone (and asks for it); the owner calls this once the
        servers have started, so that their start has the machine to itself."""
        self._vectors.want_queries()

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """Block until every submitted update is searchable and written to the index of
        record (True), or ``timeout`` passes."""
        with self._queued:
            return self._queued.wait_for(lambda: self._updater is None, timeout)

    @property
    def indexing(self) -> tuple[str, ...]:
        """Servers submitted but not yet searchable."""
        with self._queued:
            return self._pending()

    def _pending(self) -> tuple[str, ...]:
        queue = self._queue
        return tuple(dict.fromkeys([*queue.busy, *queue.servers, *queue.removed]))

    # --- updates --------------------------------------------------------------------------

    def update_server(self, server: str, tools: Sequence[ToolInfo]) -> bool:
        """Replace a server's tools now. False (and nothing done) when they are unchanged."""
        return bool(self._apply({server: tuple(tools)}, removed=()))

    def remove_server(self, server: str) -> None:
        self._apply({}, removed=(server,))

    def sync(self, registry: Registry) -> None:
        """Match the registry now: changed servers re-indexed, vanished ones dropped."""
        entries = registry.servers()
        names = {e.name for e in entries}
        self._apply(
            {e.name: e.tools for e in entries},
            removed=tuple(s for s in self._servers if s not in names),
            retain=names,
        )

    def submit(self, server: str, tools: Sequence[ToolInfo]) -> None:
        """Index a server's tools in the background; searches see them once they are in."""
        with self._queued:
            self._queue.removed.discard(server)
            self._queue.servers[server] = tuple(tools)
            self._queue.leaving -= {server}
            self._start_updater()

    def submit_removal(self, server: str) -> None:
        with self._queued:
            self._queue.servers.pop(server, None)
            self._queue.removed.add(server)
            self._start_updater()

    def submit_retain(self, servers: Sequence[str]) -> None:
        """In the background, drop every server outside ``servers`` from the index and from
        its caches on disk (servers that left the configuration)."""
        with self._queued:
            self._queue.retain = set(servers)
            self._start_updater()

    def _start_updater(self) -> None:
        """Called with ``_queued`` held."""
        if self._updater is None:
            self._updater = threading.Thread(target=self._update, name="tool-index", daemon=True)
            self._updater.start()

    def _update(self) -> None:
        while True:
            with self._queued:
                queue = self._queue
                if not queue.servers and not queue.removed and queue.retain is None:
                    self.records.rest()
                    self._updater = None
                    self._queue.settle()
                    self._queued.notify_all()
                    return
                self._queue = _Queue(
                    busy=(*queue.servers, *queue.removed), leaving=frozenset(queue.removed)
                )
            try:
                removed = tuple(s for s in queue.removed if s in self._servers)
                if queue.retain is not None:
                    removed += tuple(
                        s for s in self._servers if s not in queue.retain and s not in removed
                    )
                self._apply(queue.servers, removed, queue.retain, swapped=self._swapped)
            except Exception:
                log.exception("indexing %s failed", ", ".join(queue.servers) or "servers")
            with self._queued:
                self._queue.settle()
                self._queued.notify_all()

    def _swapped(self) -> None:
        """The updater's new view is in: what it was busy with is searchable."""
        with self._queued:
            self._queue.settle()
            self._queued.notify_all()

    def _apply(
        self,
        servers: dict[str, tuple[ToolInfo, ...]],
        removed: Sequence[str],
        retain: set[str] | None = None,
        swapped: Callable[[], None] | None = None,
    ) -> list[str]:
        """Bring the given servers up to date (from the segment cache when it has their
        digest, else by analysing them), drop ``removed``, swap in a new view, then write the
        Whoosh documents and caches. With ``retain``, servers outside it are dropped from the
        caches on disk too. A server without tools (still connecting, say) is indexed as
        empty but never overwrites its cached tools. Returns the servers that changed."""
        with self._apply_lock:
            digests = {}
            for name, tools in servers.items():
                foreground.give_way()
                digests[name] = definitions_hash(tools)
            stale = {
                name: digest
                for name, digest in digests.items()
                if name not in self._servers or self._servers[name].digest != digest
            }
            removed = [s for s in removed if s in self._servers]
            if not stale and not removed and retain is None:
                return []
            cached = self._segments.load(stale) if self._segments is not None else {}
            analysed: dict[str, tuple[str, Segment]] = {}
            new = dict(self._servers)
            for name, digest in stale.items():
                foreground.give_way()
                tools = servers[name]
                segment = cached.get(name)
                if segment is not None and segment.tools == tuple(t.name for t in tools):
                    self.stats.from_cache += 1
                else:
                    segment = Segment.build(tools)
                    self.stats.analysed += 1
                    if tools:
                        analysed[name] = (digest, segment)
                new[name] = _Server(digest, tools, segment)
            for name in removed:
                new.pop(name, None)
            view = _View.build(new, self._extra_words)
            self._servers = new
            self._view = view
            if swapped is not None:
                swapped()
            self._vectors.request({name: (digest, servers[name]) for name, digest in stale.items()})
            if removed or retain is not None:
                self._vectors.forget(removed, keep_on_disk=retain)
            self.records.write(
                {n: (d, servers[n]) for n, d in stale.items() if servers[n]}, removed, retain
            )
            if self._segments is not None:
                self._segments.save(analysed)
                self._segments.forget(removed)
                if retain is not None:
                    self._segments.retain(retain)
            return [*stale, *removed]

    # --- search ---------------------------------------------------------------------------

    def search(
        self, query: str, *, limit: int = 10, server: str | None = None, fused: bool = True
    ) -> list[SearchHit]:
        """The best ``limit`` tools for ``query``, best first. Never raises on any text.
        ``fused=False`` ranks by words alone (for benchmarks)."""
        return self.find(query, limit=limit, server=server, fused=fused).hits

    def find(
        self, query: str, *, limit: int = 10, server: str | None = None, fused: bool = True
    ) -> Found:
        """``search``, with what a person should know about the answer: a filter that could
        not be read, and servers still being indexed."""
        with self._queued:  # the view with what was withdrawn from it, as of one moment
            view = self._view
            indexing = self._pending()
            withdrawn = [
                view.server_ids[s.lower()]
                for s in self._queue.withdrawn()
                if s.lower() in view.server_ids
            ]
        parsed = parse(query, self._vocabulary, SYNONYM_WEIGHT)
        if parsed.problem is not None:
            return Found([], parsed.problem, filtered=True, indexing=indexing)
        wanted = (server or parsed.server or "").lower() or None
        if limit <= 0 or not view.tools or (wanted is not None and wanted not in view.server_ids):
            return Found([], filtered=bool(parsed.filter), indexing=indexing)
        allowed = ~np.isin(view.servers_of, withdrawn)
        if wanted is not None:
            allowed &= view.servers_of == view.server_ids[wanted]
        found = self._answer(view, parsed, allowed, wanted, limit, fused, indexing)
        if found.hits or not parsed.loose or found.problem is not None:
            return found
        literal = parse(query, self._vocabulary, SYNONYM_WEIGHT, literal=True)
        words = self._answer(view, literal, allowed, wanted, limit, fused, indexing)
        said = " ".join(parsed.loose)
        return replace(words, relaxed=f"no tool fits {said}: ranked by the words instead")

    def _answer(
        self,
        view: _View,
        parsed: ParsedQuery,
        allowed: npt.NDArray[np.bool_],
        server: str | None,
        limit: int,
        fused: bool,
        indexing: tuple[str, ...],
    ) -> Found:
        """The hits for one reading of the query, among the ``allowed`` tools (of
        ``server`` alone, when one was named)."""
        terms: tuple[str, ...] = ()
        if parsed.filter:
            try:
                wanted_filter = self.records.parse(parsed.filter)
                refs = self.records.refs(wanted_filter)
            except QueryProblem as exc:
                return Found([], str(exc), filtered=True, indexing=indexing)
            inside = np.zeros(len(view.tools), dtype=bool)
            inside[[view.refs[r] for r in refs if r in view.refs]] = True
            allowed = allowed & inside
            terms = wanted_filter.terms
        if not parsed.concepts and not parsed.name_forms:
            if not parsed.filter and server is None:
                return Found([], indexing=indexing)
            return Found(self._listing(view, allowed, terms, limit), None, True, indexing)
        hits = self._rank(view, parsed, allowed, terms, limit, fused)
        return Found(hits, None, bool(parsed.filter), indexing)

    def _listing(
        self, view: _View, allowed: npt.NDArray[np.bool_], terms: tuple[str, ...], limit: int
    ) -> list[SearchHit]:
        """A filter with no request: every tool it allows, in index order, each a full
        match of what was asked."""
        return [
            SearchHit(view.tools[i], 1.0, terms, signals=Signals.filter_only())
            for i in np.flatnonzero(allowed)[:limit].tolist()
        ]

    def _rank(
        self,
        view: _View,
        parsed: ParsedQuery,
        allowed: npt.NDArray[np.bool_],
        terms: tuple[str, ...],
        limit: int,
        fused: bool,
    ) -> list[SearchHit]:
        concepts = [
            (concept, self._concept_scores(view, concept), is_verb(concept.members[0][0]))
            for concept in parsed.concepts
        ]
        meaning = self._tool_vectors(view) if fused else None
        cosine = None
        if meaning is not None and parsed.text.strip():
            query_vector = self._vectors.encode_query(parsed.text)
            cosine = meaning.dot(query_vector) if query_vector is not None else None
        exact = np.zeros(len(view.tools), dtype=bool)
        for form in parsed.name_forms:
            exact[view.names.get(form, [])] = True
        combined = fuse(
            concepts=concepts,
            cosine=cosine,
            exact=exact,
            size=len(view.tools),
            known=_known_share(parsed.concepts),
        )
        scores = np.where(allowed, combined.scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        order_key = scores + exact  # an exact name always leads
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-order_key[candidates], limit - 1)[:limit]]
        ranked = sorted(candidates.tolist(), key=lambda i: (-order_key[i], i))
        return [
            SearchHit(
                view.tools[i],
                float(scores[i]),
                (*combined.matched(i), *(t for t in terms if t not in combined.matched(i))),
                weak=combined.weak(i),
                signals=combined.signals(i),
            )
            for i in ranked
        ]

    def _tool_vectors(self, view: _View) -> HalfRows | None:
        """Every tool's vector in index order (zeros for servers still waiting), gathered
        again when the worker has published more, or the view changed, since the last
        search; None before any. Gathering only refers to the worker's arrays, so a swap
        never copies a vector."""
        generation = self._vectors.generation
        seen_generation, seen_view, meaning = self._meaning
        if generation != seen_generation or seen_view is not view:
            blocks = []
            row = 0
            for name, server in view.servers:
                vectors = self._vectors.get(name, server.digest)
                if vectors is not None and len(vectors):
                    blocks.append((row, vectors))
                row += len(server.tools)
            meaning = HalfRows(blocks, row) if blocks else None
            self._meaning = (generation, view, meaning)
        return meaning

    def _concept_scores(self, view: _View, concept: Concept) -> Floats | None:
        """Per tool, the best-scoring way the tool says what the concept means. Taking the
        best (not the sum) keeps a tool that uses three synonyms from outranking one that
        uses the very word typed."""
        size = len(view.tools)
        vector = np.zeros(size, dtype=np.float32)
        found_any = False
        members = list(concept.members)
        own = members[0][0]
        typed = concept.surfaces[0]
        english = known_words()
        if (
            len(own) == 1
            and len(members) == 1
            and own[0] not in view.corrector
            and typed not in english
        ):
            fixes = set(view.corrector.corrections(own[0]))
            fixes |= {
                fixed
                for fixed in map(stem, english_corrections(typed, english))
                if fixed in view.corrector
            }
            members += [((fix,), TYPO_WEIGHT) for fix in sorted(fixes)]
        for stems, weight in members:
            if len(stems) == 1:
                found = view.postings.lookup(stems[0])
                if found is not None:
                    docs, weights = found
                    vector[docs] = np.maximum(vector[docs], weight * weights)
                    found_any = True
                continue
            phrase = np.zeros(size, dtype=np.float32)
            for part in stems:
                found = view.postings.lookup(part)
                if found is not None:
                    phrase[found[0]] += found[1]
                    found_any = True
            np.maximum(vector, phrase * (weight / len(stems)), out=vector)
        return vector if found_any else None


def _known_share(concepts: Sequence[Concept]) -> float:
    """The share of the request's typed words that the encoder knows as whole words."""
    typed = [w for c in concepts for w in c.surfaces if w.isalpha()]
    if not typed:
        return 1.0
    known = known_words()
    return sum(w in known or (w.endswith("s") and w[:-1] in known) for w in typed) / len(typed)
