"""The Whoosh index of record: one document per tool, and the query language people filter with.

Every tool bassi knows is a document (server, name, title, description, parameters, the
annotations' hints and the tool's definition hash), replaced per server as servers connect,
change or leave. It answers the fielded part of a query (``server:github``, ``name:create*``,
``readonly:yes``, ``destructive:no``, quoted phrases, ``NOT``): the set of tools a query
allows. Ranking stays with the in-memory postings (``postings.py``), which answer in a
millisecond where Whoosh's own scorer takes 100-900 times longer at 10,000 tools.

The index is only ever derived data: a missing, corrupt or foreign-format index on disk is
set aside and rebuilt from the tools, never an error.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh import fields, index, query
from whoosh.analysis import LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.filedb.filestore import FileStorage, RamStorage
from whoosh.lang.porter2 import stem
from whoosh.qparser import MultifieldParser

from bassi.core import foreground
from bassi.core.json_store import write_atomic
from bassi.core.search.analysis import STOP_WORDS
from bassi.core.search.documents import params_text, title
from bassi.core.search.records_writer import RecordsWriter, write_documents
from bassi.core.tools import ToolInfo

log = logging.getLogger(__name__)

FORMAT = "bassi-records-3"
"""Bumped whenever the schema changes, so an older index on disk is rebuilt."""
DESCRIPTION_CHARS = 600
PARAMS_CHARS = 300
"""Whoosh analyses ~50,000 words a second in Python: past the first paragraphs (where a
tool says what it does and what it takes) a filter gains little for the time it costs."""
HELPER_MIN_DOCUMENTS = 200
"""Starting the writer process costs about as much as writing this many documents: fewer
(bassi's own servers, a small project) are written here, unless the writer already runs."""
INDEX_NAME = "tools"
DIGESTS = "servers.json"

_WORDS = r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+"
"""Words, also inside identifiers (``createIssue``, ``list_pull_requests``), as
``analysis.py`` splits them."""


def _analyzer(stop: bool) -> Any:
    chain = RegexTokenizer(_WORDS) | LowercaseFilter()
    if stop:
        chain = chain | StopFilter(stoplist=STOP_WORDS, minsize=1)
    return chain | StemFilter(stemfn=stem)


HINTS = {
    "readonly": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "openworld": "openWorldHint",
}
"""Query field -> the MCP annotation it reads; each is ``yes`` or ``no`` when the server
says, and absent when it does not."""
TEXT_FIELDS = ("name", "title", "description", "params")
FIELDS = ("server", *TEXT_FIELDS, *HINTS)
"""The fields a person may name in a query."""


def _schema() -> fields.Schema:
    names = _analyzer(stop=False)
    prose = _analyzer(stop=True)
    return fields.Schema(
        ref=fields.ID(stored=True, unique=True),
        server=fields.KEYWORD(lowercase=True),
        server_words=fields.TEXT(analyzer=names, phrase=True),
        name=fields.TEXT(analyzer=names, phrase=True),
        title=fields.TEXT(analyzer=prose, phrase=True),
        description=fields.TEXT(analyzer=prose, phrase=True),
        params=fields.TEXT(analyzer=prose, phrase=True),
        definition=fields.ID(stored=True),
        digest=fields.STORED,
        **{hint: fields.ID() for hint in HINTS},
    )


def _document(tool: ToolInfo, digest: str) -> dict[str, Any]:
    document = {
        "digest": digest,
        "ref": tool.ref,
        "server": tool.server,
        "server_words": tool.server,
        "name": tool.name[:200],
        "title": title(tool),
        "description": tool.description[:DESCRIPTION_CHARS],
        "params": params_text(tool.input_schema)[:PARAMS_CHARS],
        "definition": tool.definition_hash,
    }
    for hint, key in HINTS.items():
        value = (tool.annotations or {}).get(key)
        if isinstance(value, bool):
            document[hint] = "yes" if value else "no"
    return document


class QueryProblem(ValueError):
    """A fielded query that cannot be read; the message says why, for people."""


@dataclass(frozen=True, slots=True)
class Filter:
    """The fielded part of a query, parsed."""

    query: Any
    terms: tuple[str, ...]
    """The words the filter looks for in text fields, as typed, for highlighting."""


class ToolRecords:
    """The per-tool Whoosh index, on disk under ``directory`` or in memory (None). Writes
    come from one thread at a time (the index's updater); searches from any thread. With
    ``in_helper``, an on-disk index is written by a helper process (``records_writer.py``)."""

    def __init__(self, directory: Path | None, *, in_helper: bool = False) -> None:
        self._directory = directory
        self._writer = (
            RecordsWriter(directory, INDEX_NAME) if in_helper and directory is not None else None
        )
        self._index: Any = None
        self._lock = threading.Lock()
        self._opening = threading.Lock()
        self._digests: dict[str, str] | None = None
        # Unfielded words and phrases look in the server's name too: "NOT github".
        self._parser = MultifieldParser(["server_words", *TEXT_FIELDS], _schema())

    def _open(self) -> Any:
        if self._index is not None:
            return self._index
        with self._opening:  # the updater and a search may both be first
            if self._index is None:
                self._index = self._open_or_create()
            return self._index

    def _open_or_create(self) -> Any:
        if self._directory is None:
            return RamStorage().create_index(_schema(), indexname=INDEX_NAME)
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            if index.exists_in(str(self._directory), INDEX_NAME) and self._format_ok():
                opened = FileStorage(str(self._directory)).open_index(INDEX_NAME)
                with opened.searcher() as probe:  # a corrupt segment fails here
                    probe.doc_count()
                return opened
        except Exception as exc:
            log.warning("tool index at %s unusable (%s); rebuilding", self._directory, exc)
        return self._create()

    def _format_ok(self) -> bool:
        assert self._directory is not None
        marker = self._directory / "FORMAT"
        return marker.is_file() and marker.read_text(encoding="utf-8").strip() == FORMAT

    def _create(self) -> Any:
        """An empty index in place of whatever the directory held."""
        assert self._directory is not None
        shutil.rmtree(self._directory, ignore_errors=True)
        self._directory.mkdir(parents=True, exist_ok=True)
        created = FileStorage(str(self._directory)).create_index(_schema(), indexname=INDEX_NAME)
        (self._directory / "FORMAT").write_text(FORMAT, encoding="utf-8")
        return created

    def digests(self) -> dict[str, str]:
        """Per server, the hash of the tool definitions its documents were written from:
        what tells a writer that a server's documents are already right. Kept beside the
        index (``servers.json``) so a start need not read every stored document."""
        if self._digests is None:
            self._digests = self._read_digests()
        return dict(self._digests)

    def _read_digests(self) -> dict[str, str]:
        self._open()
        if self._directory is not None:
            try:
                stored = json.loads((self._directory / DIGESTS).read_text(encoding="utf-8"))
                if isinstance(stored, dict):
                    return {str(k): str(v) for k, v in stored.items()}
            except (OSError, ValueError):
                pass
        out: dict[str, str] = {}
        try:
            with self._open().searcher() as searcher:
                for fields_ in searcher.all_stored_fields():
                    out[str(fields_.get("ref", "")).split("/", 1)[0]] = str(fields_.get("digest"))
        except Exception as exc:
            log.warning("tool index unreadable (%s); rewriting it", exc)
        return out

    def write(
        self,
        servers: Mapping[str, tuple[str, Sequence[ToolInfo]]],
        removed: Iterable[str] = (),
        retain: Iterable[str] | None = None,
    ) -> None:
        """Replace the documents of the given servers (name -> (definitions hash, tools))
        and drop those of ``removed`` (and with ``retain``, of every server outside it), in
        one commit. A server whose documents were written from the same definitions is left
        as it is: a restart with nothing changed writes nothing."""
        with self._lock:
            held = self.digests()
            gone = {name for name in removed if name in held}
            if retain is not None:
                keep = set(retain) | set(servers)
                gone |= {name for name in held if name not in keep}
            stale = {n: tools for n, (digest, tools) in servers.items() if held.get(n) != digest}
            if not stale and not gone:
                return
            try:
                self._commit([*gone, *stale], self._documents(stale, servers))
            except Exception as exc:
                log.warning("could not write the tool index (%s)", exc)
                self._digests = None
                return
            for name in gone:
                held.pop(name, None)
            held.update({name: servers[name][0] for name in stale})
            self._digests = held
            self._save_digests(held)

    def _documents(
        self,
        stale: Mapping[str, Sequence[ToolInfo]],
        servers: Mapping[str, tuple[str, Sequence[ToolInfo]]],
    ) -> list[dict[str, Any]]:
        documents = []
        for name, tools in stale.items():
            for tool in tools:
                foreground.give_way()
                documents.append(_document(tool, servers[name][0]))
        return documents

    def _commit(self, deleted: Sequence[str], documents: Sequence[dict[str, Any]]) -> None:
        """One change, by the helper when there is one, else here (also once the helper has
        failed to start or answer)."""
        index = self._open()  # made here first: the helper only ever opens an index
        if self._writer is not None and self._writer.worth_asking(
            len(documents), HELPER_MIN_DOCUMENTS
        ):
            try:
                self._writer.write(deleted, documents)
                return
            except OSError as exc:
                log.warning("writing the tool index here instead: %s", exc)
                self._writer = None
        write_documents(index, deleted, documents)

    def rest(self) -> None:
        """Nothing more to write for now: the helper stops until the next change (after the
        change in hand, should another thread be writing)."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()

    def _save_digests(self, digests: dict[str, str]) -> None:
        if self._directory is None:
            return
        try:
            write_atomic(self._directory / DIGESTS, digests)
        except OSError as exc:
            log.warning("could not write %s (%s)", DIGESTS, exc)

    def count(self) -> int:
        """Documents held: one per tool."""
        try:
            with self._open().searcher() as searcher:
                return int(searcher.doc_count())
        except Exception:
            return 0

    def refs(self, wanted: Filter) -> set[str]:
        """``server/tool`` of every document the filter allows."""
        with self._open().searcher() as searcher:
            results = searcher.search(wanted.query, limit=None)
            return {str(hit["ref"]) for hit in results}

    def parse(self, text: str) -> Filter:
        """The fielded query in ``text``; raises ``QueryProblem`` when it cannot be read."""
        try:
            parsed = self._parser.parse(text)
        except Exception as exc:
            problem = f"cannot read the filter '{text}' ({exc.__class__.__name__})"
            raise QueryProblem(problem) from exc
        if parsed is query.NullQuery:
            raise QueryProblem(f"the filter '{text}' asks for nothing")
        parsed = query.And([query.Every(), parsed])  # "NOT x" alone: every tool but x
        terms = tuple(
            dict.fromkeys(
                str(word) for field, word in _positive_terms(parsed) if field in TEXT_FIELDS
            )
        )
        return Filter(parsed, terms)


def _positive_terms(parsed: Any) -> Iterable[tuple[str, str]]:
    """(field, text) of the terms, phrases and prefixes a query asks for (not those under a
    NOT): what highlighting marks."""
    if isinstance(parsed, query.Not):
        return
    if isinstance(parsed, query.Phrase):
        for word in parsed.words:
            yield parsed.fieldname, str(word)
        return
    if isinstance(parsed, query.Term | query.Prefix | query.Wildcard):
        yield parsed.fieldname, str(parsed.text).rstrip("*?")
        return
    for child in parsed.children() if parsed.is_leaf() is False else ():
        yield from _positive_terms(child)
