"""The on-disk Whoosh index of analysed servers, invalidated per server.

One document per server holds its name, the hash of its tool definitions, its tool names and
its analysed text as compact arrays: the (term, tool, field, frequency) entries the in-memory
postings are built from. A start with nothing changed therefore reads stored fields only
instead of re-analysing every tool, and a changed server's document is replaced by its server
term, leaving the others alone. (Per-tool documents were measured: Whoosh spends ~0.14 ms
writing each, 1.4 s at 10,000 tools, which does not fit the 4 s cold-start budget.)

The cache is only ever a cache: a missing, corrupt or foreign-version index is set aside and
rebuilt, never an error.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import fields, index
from whoosh.filedb.filestore import FileStorage

from bassi.core.search.documents import FIELDS
from bassi.core.search.postings import Segment

log = logging.getLogger(__name__)

FORMAT = "bassi-tools-5"
"""Bumped whenever analysis or the stored layout changes, so old caches are rebuilt."""
INDEX_NAME = "tools"

_ENTRY = np.dtype([("term", "<i4"), ("doc", "<i4"), ("field", "i1"), ("tf", "<u2")])


def _schema() -> fields.Schema:
    return fields.Schema(
        server=fields.ID(stored=True, unique=True),
        digest=fields.STORED,
        tools=fields.STORED,
        vocabulary=fields.STORED,
        postings=fields.STORED,
        lengths=fields.STORED,
    )


class SegmentStore:
    """Per-server segments persisted in a Whoosh index under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._index: Any = None

    def _open(self) -> Any:
        if self._index is not None:
            return self._index
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            if index.exists_in(str(self._directory), INDEX_NAME) and self._format_ok():
                self._index = FileStorage(str(self._directory)).open_index(INDEX_NAME)
            else:
                self._index = self._create()
        except Exception as exc:
            log.warning("tool index cache at %s unusable (%s); rebuilding", self._directory, exc)
            self._index = self._create()
        return self._index

    def _format_ok(self) -> bool:
        marker = self._directory / "FORMAT"
        return marker.is_file() and marker.read_text(encoding="utf-8").strip() == FORMAT

    def _create(self) -> Any:
        """An empty index in place of whatever the directory held."""
        shutil.rmtree(self._directory, ignore_errors=True)
        self._directory.mkdir(parents=True, exist_ok=True)
        created = FileStorage(str(self._directory)).create_index(_schema(), indexname=INDEX_NAME)
        (self._directory / "FORMAT").write_text(FORMAT, encoding="utf-8")
        return created

    def load(self, wanted: dict[str, str]) -> tuple[dict[str, Segment], set[str]]:
        """Segments of the servers in ``wanted`` (server -> digest) whose cached digest
        matches (servers missing, stale or unreadable are simply not returned), and the names
        of every server the cache holds."""
        out: dict[str, Segment] = {}
        present: set[str] = set()
        try:
            with self._open().reader() as reader:
                for stored in reader.all_stored_fields():
                    server = stored.get("server")
                    present.add(str(server))
                    if server not in wanted or stored.get("digest") != wanted[server]:
                        continue
                    try:
                        out[server] = _segment_from(stored)
                    except Exception as exc:
                        log.warning("cached index for server %r unreadable (%s)", server, exc)
        except Exception as exc:
            log.warning("tool index cache unreadable (%s); re-indexing", exc)
        return out, present

    def save(self, segments: dict[str, tuple[str, Segment]], removed: Iterable[str] = ()) -> None:
        """Replace the documents of the given servers (server -> (digest, segment)) and drop
        those of ``removed``, in one commit."""
        try:
            writer = self._open().writer(limitmb=32)
            try:
                for server in removed:
                    writer.delete_by_term("server", server)
                for server, (digest, segment) in segments.items():
                    writer.update_document(**_document(server, digest, segment))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
        except Exception as exc:
            log.warning("could not write the tool index cache (%s)", exc)


def _document(server: str, digest: str, segment: Segment) -> dict[str, Any]:
    entries = np.empty(len(segment.term), dtype=_ENTRY)
    entries["term"] = segment.term
    entries["doc"] = segment.doc
    entries["field"] = segment.field
    entries["tf"] = np.minimum(segment.tf, 65535)
    return {
        "server": server,
        "digest": digest,
        "tools": "\n".join(segment.tools),
        "vocabulary": "\n".join(segment.vocabulary),
        "postings": entries.tobytes(),
        "lengths": segment.lengths.astype("<f4").tobytes(),
    }


def _segment_from(stored: dict[str, Any]) -> Segment:
    tools = tuple(str(stored["tools"]).split("\n")) if stored["tools"] else ()
    vocabulary = tuple(str(stored["vocabulary"]).split("\n")) if stored["vocabulary"] else ()
    entries = np.frombuffer(stored["postings"], dtype=_ENTRY)
    lengths = np.frombuffer(stored["lengths"], dtype="<f4").reshape(len(tools), len(FIELDS))
    if len(entries) and (
        int(entries["term"].max()) >= len(vocabulary) or int(entries["doc"].max()) >= len(tools)
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
