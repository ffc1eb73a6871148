"""Analysed servers on disk, one ``.npz`` per server, so a start with nothing changed never
re-analyses a tool (~0.2 ms of CPU per tool, ~2 s at 10,000 tools).

A file holds a server's name, the hash of its tool definitions, its tool names and its
analysed text as compact arrays: the (term, tool, field, frequency) entries the in-memory
postings are built from. It is named by a hash of the server, so a changed server replaces
its own file and leaves the others alone; ``FORMAT`` is inside, so a change of analysis reads
as absent. The cache is only ever a cache: a missing, truncated or foreign file reads as
absent and the server is analysed again, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from bassi.core.search.documents import FIELDS
from bassi.core.search.postings import Segment
from bassi.core.search.vector_cache import write_atomic

log = logging.getLogger(__name__)

FORMAT = "bassi-segments-1"
"""Bumped whenever analysis or the stored layout changes, so old files are ignored."""

_ENTRY = np.dtype([("term", "<i4"), ("doc", "<i4"), ("field", "i1"), ("tf", "<u2")])


def _name(server: str) -> str:
    return hashlib.sha256(server.encode("utf-8", "surrogatepass")).hexdigest()[:24] + ".npz"


class SegmentCache:
    def __init__(self, directory: Path) -> None:
        self._directory = directory

    def load(self, wanted: dict[str, str]) -> dict[str, Segment]:
        """Segments of the servers in ``wanted`` (server -> definitions hash) cached for
        exactly that hash; the others are simply not returned."""
        out: dict[str, Segment] = {}
        for server, digest in wanted.items():
            path = self._directory / _name(server)
            try:
                with np.load(path, allow_pickle=False) as stored:
                    header = [str(x) for x in stored["header"]]
                    if header != [FORMAT, server, digest]:
                        continue
                    out[server] = _segment_from(stored)
            except FileNotFoundError:
                continue
            except Exception as exc:
                log.warning("cached index for server %r unreadable (%s)", server, exc)
        return out

    def save(self, segments: dict[str, tuple[str, Segment]]) -> None:
        """Write each server's (digest, segment) atomically: a reader never sees half."""
        try:
            for server, (digest, segment) in segments.items():
                arrays = {"header": np.array([FORMAT, server, digest]), **_arrays(segment)}
                write_atomic(
                    self._directory / _name(server),
                    lambda f, arrays=arrays: np.savez(f, **arrays),  # type: ignore[misc]
                )
        except OSError as exc:
            log.warning("could not write the tool index cache (%s)", exc)

    def forget(self, servers: Iterable[str]) -> None:
        for server in servers:
            with contextlib.suppress(OSError):
                (self._directory / _name(server)).unlink(missing_ok=True)

    def retain(self, servers: Iterable[str]) -> None:
        """Drop the files of every server not in ``servers``."""
        keep = {_name(s) for s in servers}
        with contextlib.suppress(OSError):
            for path in self._directory.glob("*.npz"):
                if path.name not in keep:
                    path.unlink(missing_ok=True)


def _arrays(segment: Segment) -> dict[str, np.ndarray]:
    entries = np.empty(len(segment.term), dtype=_ENTRY)
    entries["term"] = segment.term
    entries["doc"] = segment.doc
    entries["field"] = segment.field
    entries["tf"] = np.minimum(segment.tf, 65535)
    return {
        "tools": np.array(segment.tools, dtype=str),
        "vocabulary": np.array(segment.vocabulary, dtype=str),
        "entries": entries,
        "lengths": segment.lengths.astype("<f4"),
    }


def _segment_from(stored: np.lib.npyio.NpzFile) -> Segment:
    tools = tuple(str(t) for t in stored["tools"])
    vocabulary = tuple(str(t) for t in stored["vocabulary"])
    entries = stored["entries"]
    lengths = stored["lengths"].reshape(len(tools), len(FIELDS))
    if entries.dtype != _ENTRY or (
        len(entries)
        and (
            int(entries["term"].max()) >= len(vocabulary) or int(entries["doc"].max()) >= len(tools)
        )
    ):
        raise ValueError("postings point outside the stored vocabulary or tools")
    return Segment(
        tools=tools,
        vocabulary=vocabulary,
        term=entries["term"].astype(np.int32),
        doc=entries["doc"].astype(np.int32),
        field=entries["field"].astype(np.int8),
        tf=entries["tf"].astype(np.float32),
        lengths=lengths.astype(np.float32),
    )
