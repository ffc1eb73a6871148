"""Tool meaning vectors on disk, one float16 ``.npy`` per server, so a start with nothing
changed never runs the model over tools (~5 ms of CPU per tool, ~50 s at 10,000 tools).

A file is named by a hash of its server and a hash of what its vectors were made from (the
server's tool-definitions hash and ``FORMAT``): a changed server writes a new file and drops
its old one, leaving every other server's alone. The files live next to the lexical index
cache rather than inside it, so rebuilding that cache (a new analysis format) does not throw
away vectors that are still right.

The cache is only ever a cache: a missing, truncated, foreign or otherwise wrong file reads
as absent and the vectors are computed again, never an error.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bassi.core.json_store import write_file_atomic
from bassi.core.search.encoder import DIMENSIONS

log = logging.getLogger(__name__)

FORMAT = "mpnet-tools-w8-3/tool-text-4"
"""Bumped whenever the model or what a tool's text is made of changes."""

HalfVectors = npt.NDArray[np.float16]


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


class VectorCache:
    def __init__(self, directory: Path) -> None:
        self._directory = directory

    def _path(self, server: str, digest: str) -> Path:
        return self._directory / f"{_hash(server)}-{_hash(FORMAT, server, digest)}.npy"

    def load(self, server: str, digest: str, count: int) -> HalfVectors | None:
        """The server's vectors if cached for exactly these definitions, else None."""
        path = self._path(server, digest)
        try:
            vectors = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            return None
        except Exception as exc:
            log.warning("cached tool vectors %s unreadable (%s); recomputing", path.name, exc)
            return None
        if (
            vectors.dtype != np.float16
            or vectors.shape != (count, DIMENSIONS)
            or not np.isfinite(vectors).all()
        ):
            log.warning("cached tool vectors %s do not fit; recomputing", path.name)
            return None
        out: HalfVectors = vectors
        return out

    def save(self, server: str, digest: str, vectors: HalfVectors) -> None:
        """Write atomically (a reader never sees half a file) and drop the server's older
        vectors."""
        path = self._path(server, digest)
        try:
            write_file_atomic(path, lambda f: np.save(f, vectors, allow_pickle=False))
            for old in self._directory.glob(f"{_hash(server)}-*.npy"):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not cache tool vectors for %r (%s)", server, exc)

    def retain(self, servers: Iterable[str]) -> None:
        """Drop the vectors of every server not in ``servers``."""
        keep = {_hash(s) for s in servers}
        try:
            for path in self._directory.glob("*.npy"):
                if path.name.split("-", 1)[0] not in keep:
                    path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not prune the tool vector cache (%s)", exc)
