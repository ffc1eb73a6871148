"""Every tool's meaning vector, computed in the background.

Encoding costs ~5 ms of CPU per tool, so 10,000 tools would keep the app unsearchable for
close to a minute; instead the lexical index is searchable at once and a worker thread brings
each server's vectors (from the disk cache, else from the model) while the app runs. The app's
index has the model run in a helper process (``vector_worker.py``), which leaves the app's
interpreter and the machine's cores to the screen, even for a project's few tools until the
app's own model is loaded or wanted; where the helper cannot run, the model runs on the worker
thread, which onnxruntime leaves the GIL to while it computes.

The app's own copy of the model, which turns a request into its vector, is loaded only once
something asks for it (``want_queries``: the runtime once its servers have connected or a
message is sent, a search, anyone waiting for fused searches). Loading it takes a core for
about 0.3 s and holds the GIL for about 20 ms (the tokenizer); done while thirty servers
start, it stalled the screen (``bench/loop_lag.py``).

The worker only ever touches this object's own state, under its lock: a finished server's
vectors are published whole into ``ready`` and ``generation`` is bumped, and the index, on its
own thread, notices the new generation at its next search and swaps in the vectors it can use.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from bassi.core.search.documents import encoder_text
from bassi.core.search.encoder import DIMENSIONS, SentenceEncoder, Vectors
from bassi.core.search.vector_cache import HalfVectors, VectorCache
from bassi.core.search.vector_worker import VectorWorker
from bassi.core.tools import ToolInfo

log = logging.getLogger(__name__)

CHUNK = 16
"""Tools encoded between two looks at whether the process is exiting."""
HELPER_MIN_TOOLS = 25
"""Starting the helper and loading its model (about 0.45 s) costs about as much as encoding
this many tools (17 ms each): once the app's model is loaded or wanted for searches, fewer
waiting are encoded on the worker thread, unless the helper already runs."""
_exiting = threading.Event()
_workers: dict[threading.Thread, VectorWorker | None] = {}
"""Each worker thread and the helper process it asks, if any."""


@atexit.register
def _stop_workers() -> None:
    """Let every worker finish the text in hand before the interpreter goes away: a thread
    killed inside onnxruntime at exit aborts the process ("terminate called..."). A worker
    waiting for its helper stops waiting when the helper is stopped."""
    _exiting.set()
    for worker, helper in list(_workers.items()):
        if helper is not None:
            helper.close()
        worker.join(timeout=10)


def _release_freed_memory() -> None:
    """Hand the heap that building the lexical index freed back to the system before the
    model (~90 MB) is loaded. glibc keeps it otherwise (~60 MB at 10,000 tools), and the
    model would then stack on top of it in the process's peak memory."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)


class Counts(Protocol):
    """Where the worker counts how each server's vectors came (``IndexStats``)."""

    vectors_computed: int
    vectors_from_cache: int


@dataclass(frozen=True, slots=True)
class _Job:
    digest: str
    tools: tuple[ToolInfo, ...]


class ToolVectors:
    """Per server, the vectors of its tools for one definitions hash, brought by a worker
    thread that exists only while there is work."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        cache_dir: Path | None,
        stats: Counts,
        *,
        in_helper: bool = False,
    ) -> None:
        self.encoder = encoder
        self._helper = VectorWorker(encoder.model_dir) if in_helper else None
        self._stats = stats
        self._cache = VectorCache(cache_dir) if cache_dir is not None else None
        self._lock = threading.Condition()
        self._wanted: dict[str, _Job] = {}
        self._queue: dict[str, None] = {}
        self._ready: dict[str, tuple[str, HalfVectors]] = {}
        self._worker: threading.Thread | None = None
        self._busy = False
        self._failed = False
        self._queries_wanted = False
        self.generation = 0
        """Bumped each time a server's vectors become available."""

    def request(self, servers: Mapping[str, tuple[str, Sequence[ToolInfo]]]) -> None:
        """Bring vectors for these servers (name -> (definitions hash, tools)) in the
        background; servers already ready for that hash cost nothing."""
        with self._lock:
            for server, (digest, tools) in servers.items():
                self._wanted[server] = _Job(digest, tuple(tools))
                ready = self._ready.get(server)
                if ready is None or ready[0] != digest:
                    self._queue[server] = None
            self._start()

    def forget(self, servers: Iterable[str], *, keep_on_disk: Iterable[str] | None = None) -> None:
        """Stop wanting these servers' vectors; with ``keep_on_disk``, also drop the cached
        vectors of every server outside it."""
        with self._lock:
            for server in servers:
                self._wanted.pop(server, None)
                self._queue.pop(server, None)
                self._ready.pop(server, None)
            self.generation += 1
        if keep_on_disk is not None and self._cache is not None:
            self._cache.retain(keep_on_disk)

    def get(self, server: str, digest: str) -> HalfVectors | None:
        ready = self._ready.get(server)
        return ready[1] if ready is not None and ready[0] == digest else None

    def want_queries(self) -> None:
        """Load the model for requests in the background, if it is not loaded yet."""
        with self._lock:
            self._queries_wanted = True
            self._start()

    def encode_query(self, text: str) -> Vectors | None:
        """The query's vector, or None while the model is still loading, which this asks for
        (a search never waits for it)."""
        if not self.encoder.loaded:
            self.want_queries()
            return None
        vector: Vectors = self.encoder.encode([text])[0]
        return vector

    def _settled(self) -> bool:
        """Called with the lock held: nothing left to do, or nothing more that can be done."""
        idle = not self._queue and not self._busy
        return self._failed or (idle and (self.encoder.loaded or not self._wanted))

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every wanted server has its vectors and the model is loaded for
        queries (True), or ``timeout`` seconds pass or the model failed (False). Asks for the
        model: whoever waits for fused searches wants it."""
        self.want_queries()
        with self._lock:
            return self._lock.wait_for(self._settled, timeout) and not self._failed

    @property
    def ready(self) -> bool:
        """What ``wait`` would return at once, asking for nothing."""
        with self._lock:
            return self._settled() and not self._failed

    def _start(self) -> None:
        """Called with the lock held."""
        wanted = self._queue or (self._queries_wanted and not self.encoder.loaded)
        if wanted and self._worker is None and not self._failed:
            self._worker = threading.Thread(target=self._run, name="tool-vectors", daemon=True)
            _workers[self._worker] = self._helper
            self._worker.start()

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._queue or _exiting.is_set():
                        break
                    server = next(iter(self._queue))
                    del self._queue[server]
                    job = self._wanted[server]
                    self._busy = True
                vectors = self._vectors_of(server, job)
                if vectors is None:
                    break
                with self._lock:
                    self._busy = False
                    wanted = self._wanted.get(server)
                    if wanted is not None and wanted.digest == job.digest:
                        self._ready[server] = (job.digest, vectors)
                        self.generation += 1
                    self._lock.notify_all()
            if self._queries_wanted and not _exiting.is_set():
                self._load_model()
        except Exception:
            log.exception("computing tool vectors failed; search stays lexical")
            with self._lock:
                self._failed = True
        finally:
            if self._helper is not None:
                self._helper.close()  # the model's memory goes back until there is more to do
            with self._lock:
                _workers.pop(threading.current_thread(), None)
                self._busy = False
                self._worker = None
                if not _exiting.is_set():
                    self._start()  # work that came after the loop's last look
                self._lock.notify_all()

    def _load_model(self) -> None:
        """Load the model once, trimming the heap first: servers whose vectors come from the
        cache never need the model, so they never pay for a trim either."""
        if not self.encoder.loaded:
            _release_freed_memory()
            self.encoder.load()

    def _vectors_of(self, server: str, job: _Job) -> HalfVectors | None:
        """The server's vectors from the cache, else from the model; None when the process
        began exiting meanwhile. A server without tools (still connecting) leaves its cached
        vectors alone, as the lexical cache does."""
        if not job.tools:
            return np.zeros((0, DIMENSIONS), dtype=np.float16)
        if self._cache is not None:
            cached = self._cache.load(server, job.digest, len(job.tools))
            if cached is not None:
                self._stats.vectors_from_cache += 1
                return cached
        with self._lock:
            waiting = sum(len(self._wanted[s].tools) for s in self._queue) + len(job.tools)
        # Before anything asked for the app's model, encoding here would load it, which is
        # what stalled the screen while servers start; the helper loads its own away from it.
        model_unwanted = not (self.encoder.loaded or self._queries_wanted)
        use_helper = self._helper is not None and (
            model_unwanted or self._helper.worth_asking(waiting, HELPER_MIN_TOOLS)
        )
        texts = [encoder_text(t) for t in job.tools]
        vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float16)
        for start in range(0, len(texts), CHUNK):
            if _exiting.is_set():
                return None
            if self._queries_wanted or not use_helper:
                # to encode here, or for searches: they need not wait for every tool's vector
                self._load_model()
            chunk = self._encode(texts[start : start + CHUNK], use_helper)
            if chunk is None:
                return None
            vectors[start : start + CHUNK] = chunk
        self._stats.vectors_computed += 1
        if self._cache is not None:
            self._cache.save(server, job.digest, vectors)
        return vectors

    def _encode(self, texts: Sequence[str], use_helper: bool) -> Vectors | None:
        """The texts' vectors from the helper, or here when not to use it, without one or
        once it has failed; None when the process began exiting meanwhile (which stops the
        helper)."""
        helper = self._helper if use_helper else None
        if helper is not None:
            try:
                return helper.encode(texts)
            except OSError as exc:
                if _exiting.is_set():
                    return None
                log.warning("encoding tools here instead: %s", exc)
                self._helper = None
                with self._lock:
                    _workers[threading.current_thread()] = None
                self._load_model()
        return self.encoder.encode(texts)
