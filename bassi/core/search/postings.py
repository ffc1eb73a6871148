"""Compact BM25F postings kept in memory, built per server and merged.

Whoosh holds the index of record; answering from Python-level Whoosh matchers costs tens of
milliseconds at 10,000 tools, so queries run against these numpy arrays instead. A server's
analysed tools form a ``Segment`` (what the on-disk cache stores); ``Postings`` merges the
segments into one term -> (docs, precomputed BM25F weight) table, rebuilt only when a server
changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bassi.core import foreground
from bassi.core.search.analysis import stems
from bassi.core.search.documents import FIELDS, field_texts
from bassi.core.tools import ToolInfo

BOOSTS = np.array([3.0, 1.0, 1.5, 1.0, 0.5], dtype=np.float32)
"""Per-field weight, in ``FIELDS`` order: a word in the name says more than one in a note."""
LENGTH_NORM = np.array([0.3, 0.0, 0.5, 0.75, 0.75], dtype=np.float32)
"""BM25 ``b`` per field."""
K1 = 1.2
NAME_BONUS = 2.0
"""Added (times idf) when the term is in the tool's or its server's name: a name says what a
tool does, a description also says what it does not."""
_NAMING_FIELDS = 2

Ints = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Segment:
    """One server's tools, analysed: for every (term, tool, field) the term frequency."""

    tools: tuple[str, ...]
    """Tool names, in document order."""
    vocabulary: tuple[str, ...]
    term: Ints
    doc: Ints
    field: npt.NDArray[np.int8]
    tf: Floats
    lengths: Floats
    """Shape (tools, fields): terms per field."""

    @classmethod
    def build(cls, tools: Sequence[ToolInfo]) -> Segment:
        ids: dict[str, int] = {}
        term: list[int] = []
        doc: list[int] = []
        field: list[int] = []
        tf: list[int] = []
        lengths = np.zeros((len(tools), len(FIELDS)), dtype=np.float32)
        for d, tool in enumerate(tools):
            foreground.give_way()
            texts = field_texts(tool)
            for f, text in enumerate(texts):
                counts = Counter(stems(text))
                lengths[d, f] = sum(counts.values())
                for word, n in counts.items():
                    term.append(ids.setdefault(word, len(ids)))
                    doc.append(d)
                    field.append(f)
                    tf.append(n)
        return cls(
            tools=tuple(t.name for t in tools),
            vocabulary=tuple(ids),
            term=np.array(term, dtype=np.int32),
            doc=np.array(doc, dtype=np.int32),
            field=np.array(field, dtype=np.int8),
            tf=np.array(tf, dtype=np.float32),
            lengths=lengths,
        )

    @property
    def size(self) -> int:
        return int(self.lengths.shape[0])


class Postings:
    """All segments merged: for each term, the tools containing it, sorted, with the term's
    BM25F contribution to each."""

    def __init__(self, segments: Sequence[Segment]) -> None:
        self.vocabulary: dict[str, int] = {}
        self.size = sum(s.size for s in segments)
        if self.size == 0:
            self.docs: Ints = np.zeros(0, dtype=np.int32)
            self.weights: Floats = np.zeros(0, dtype=np.float32)
            self.offsets = np.zeros(1, dtype=np.int64)
            return
        terms, docs, fields, tfs = [], [], [], []
        base = 0
        for seg in segments:
            foreground.give_way()
            mapping = np.array(
                [self.vocabulary.setdefault(t, len(self.vocabulary)) for t in seg.vocabulary],
                dtype=np.int32,
            )
            if len(seg.term):
                terms.append(mapping[seg.term])
            docs.append(seg.doc + base)
            fields.append(seg.field)
            tfs.append(seg.tf)
            base += seg.size
        term = np.concatenate(terms) if terms else np.zeros(0, dtype=np.int32)
        doc = np.concatenate(docs)
        field = np.concatenate(fields).astype(np.intp)
        tf = np.concatenate(tfs)
        lengths = np.vstack([s.lengths for s in segments if s.size])
        average = np.maximum(lengths.mean(axis=0), 1.0)
        norm = 1.0 - LENGTH_NORM[field] + LENGTH_NORM[field] * lengths[doc, field] / average[field]
        weighted = BOOSTS[field] * tf / np.maximum(norm, 1e-6)

        key = term.astype(np.int64) * self.size + doc
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        combined = np.add.reduceat(weighted[order], starts) if len(starts) else weighted[:0]
        naming = (field[order] < _NAMING_FIELDS).astype(np.float32)
        named = np.maximum.reduceat(naming, starts) if len(starts) else naming[:0]
        key = key[starts]
        term_of = (key // self.size).astype(np.int32)
        self.docs = (key % self.size).astype(np.int32)

        df = np.bincount(term_of, minlength=len(self.vocabulary)).astype(np.float32)
        idf = np.log1p((self.size - df + 0.5) / (df + 0.5)).astype(np.float32)
        saturated = combined * (K1 + 1) / (combined + K1) + NAME_BONUS * named
        self.weights = (idf[term_of] * saturated).astype(np.float32)
        self.offsets = np.concatenate(([0], np.cumsum(df.astype(np.int64))))

    def lookup(self, term: str) -> tuple[Ints, Floats] | None:
        """The tools containing ``term`` (sorted) and its BM25F weight in each."""
        tid = self.vocabulary.get(term)
        if tid is None:
            return None
        start, end = self.offsets[tid], self.offsets[tid + 1]
        return self.docs[start:end], self.weights[start:end]
