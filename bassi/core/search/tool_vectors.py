"""Every tool's meaning vector, computed in the background.

Encoding costs ~5 ms of CPU per tool, so 10,000 tools would keep the app unsearchable for
close to a minute; instead the lexical index is searchable at once and a worker thread brings
each server's vectors (from the disk cache, else from the model) while the app runs.
onnxruntime releases the GIL while it computes, so the event loop stays responsive.

The worker only ever touches this object's own state, under its lock: a finished server's
vectors are published whole into ``ready`` and ``generation`` is bumped, and the index, on its
own thread, notices the new generation at its next search and swaps in the vectors it can use.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bassi.core.search.encoder import SentenceEncoder, Vectors
from bassi.core.search.vector_cache import HalfVectors, VectorCache
from bassi.core.tools import ToolInfo

log = logging.getLogger(__name__)

DESCRIPTION_CHARS = 1_000
"""Enough for the two sentences used; the rest never reaches the model."""
SENTENCES = 2
MAX_PARAMS = 30
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")


def _words(identifier: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(identifier[:200]))


def tool_text(tool: ToolInfo) -> str:
    """What the encoder reads of a tool: server, name words, the first two sentences of the
    description and the parameter names. Measured against name + one sentence, with and
    without parameters: the parameters say what a tool acts on ("channel", "recipient")
    where a terse description does not, and later sentences are mostly usage notes."""
    parts = [p.strip() for p in _SENTENCE_END.split(tool.description[:DESCRIPTION_CHARS])]
    sentences = " ".join([p for p in parts if p][:SENTENCES])
    text = f"{tool.server[:100]} {_words(tool.name)}: {sentences}"
    params = _param_names(tool.input_schema)
    return f"{text} Parameters: {params}" if params else text


def _param_names(schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    return ", ".join(_words(str(name)) for name in list(properties)[:MAX_PARAMS])


@dataclass(frozen=True, slots=True)
class _Job:
    digest: str
    tools: tuple[ToolInfo, ...]


class ToolVectors:
    """Per server, the vectors of its tools for one definitions hash, brought by a worker
    thread that exists only while there is work."""

    def __init__(self, encoder: SentenceEncoder, cache_dir: Path | None) -> None:
        self.encoder = encoder
        self._cache = VectorCache(cache_dir) if cache_dir is not None else None
        self._lock = threading.Condition()
        self._wanted: dict[str, _Job] = {}
        self._queue: dict[str, None] = {}
        self._ready: dict[str, tuple[str, HalfVectors]] = {}
        self._worker: threading.Thread | None = None
        self._busy = False
        self._failed = False
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

    def encode_query(self, text: str) -> Vectors | None:
        """The query's vector, or None while the model is still loading (a search never
        waits for it)."""
        if not self.encoder.loaded:
            return None
        vector: Vectors = self.encoder.encode([text])[0]
        return vector

    def _settled(self) -> bool:
        """Called with the lock held: nothing left to do, or nothing more that can be done."""
        idle = not self._queue and not self._busy
        return self._failed or (idle and (self.encoder.loaded or not self._wanted))

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every wanted server has its vectors and the model is loaded for
        queries (True), or ``timeout`` seconds pass or the model failed (False)."""
        with self._lock:
            return self._lock.wait_for(self._settled, timeout) and not self._failed

    def _start(self) -> None:
        """Called with the lock held."""
        wanted = self._queue or (self._wanted and not self.encoder.loaded)
        if wanted and self._worker is None and not self._failed:
            self._worker = threading.Thread(target=self._run, name="tool-vectors", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._queue:
                        break
                    server = next(iter(self._queue))
                    del self._queue[server]
                    job = self._wanted[server]
                    self._busy = True
                vectors = self._vectors_of(server, job)
                with self._lock:
                    self._busy = False
                    wanted = self._wanted.get(server)
                    if wanted is not None and wanted.digest == job.digest:
                        self._ready[server] = (job.digest, vectors)
                        self.generation += 1
                    self._lock.notify_all()
            self.encoder.load()
        except Exception:
            log.exception("computing tool vectors failed; search stays lexical")
            with self._lock:
                self._failed = True
        finally:
            with self._lock:
                self._busy = False
                self._worker = None
                if self._queue:
                    self._start()
                self._lock.notify_all()

    def _vectors_of(self, server: str, job: _Job) -> HalfVectors:
        if self._cache is not None:
            cached = self._cache.load(server, job.digest, len(job.tools))
            if cached is not None:
                return cached
        vectors = self.encoder.encode([tool_text(t) for t in job.tools]).astype(np.float16)
        if self._cache is not None:
            self._cache.save(server, job.digest, vectors)
        return vectors
