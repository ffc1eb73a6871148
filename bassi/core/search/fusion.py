"""How words and meaning combine into one score between 0 and 1.

Two signals say how well a tool fits a request, each between 0 and 1:

- **words**: how much of the request the tool's text covers. Each thing the request names
  counts by how rare it is among the tools (a word every tool has says little), and a tool
  covers it as well as its best field does, relative to the tool that says it best. So one
  shared common word covers little of "remember that Alice likes tea", and a tool that covers
  every word of "send an email" beats one that shares only "email".
- **meaning**: the sentence encoder's cosine between request and tool, mapped from
  ``ENCODER_FLOOR`` (unrelated texts) to ``ENCODER_CEIL`` (a close paraphrase).

They are combined as independent pieces of evidence, ``1 - (1 - words) (1 - meaning)``:
either alone can make a good match, both together a better one. Words count less for a tool
the encoder finds unrelated (``UNRELATED_DISCOUNT``). A score is therefore comparable between
queries; below ``WEAK`` it is labelled as weak.

Nothing else moves a score but an exact name, which scores 1. Rules on the verbs of tool
names (a tool doing something else than the request asks scaled down, one naming things the
request never mentions too) helped while the encoder was a general one; once it had learnt
from requests matched to tools and their siblings, they cost 1-4 points of first places on
each set measured: the development sets together and three blind sets
(``bench/README.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bassi.core.search.vocabulary import Concept

Floats = npt.NDArray[np.float32]

ENCODER_FLOOR = 0.25
"""Cosine that counts as no similarity. With the shipped encoder a request sits near 0 with
most tools, but 1 in 100 unrelated tools reaches about 0.38 (694 requests kept out of the
encoder's training: the development sets and blind6)."""
ENCODER_CEIL = 0.75
"""Cosine that counts as full similarity: a request and its tool have a median of about
0.57, a quarter of them above 0.68 (the same requests)."""
WORDS_WEIGHT = 0.45
"""The most word coverage alone can score: matching every word is evidence, but on servers
nobody tuned for, the request's meaning is the better guide. 0.6 suited the smaller encoder
bassi shipped first; with the stronger one, 0.45 ranked best of 0.3, 0.45 and 0.6 over 814
development requests on 50 servers, and again of 0.3 and 0.45 once it was retrained
(``bench/README.md``)."""
MEANING_WEIGHT = 0.9
"""The most meaning alone can score."""
UNRELATED_DISCOUNT = 0.5
"""How much of its word coverage a tool keeps less where the encoder finds it unrelated to
the request (cosine 0 or below, full coverage again from ``ENCODER_FLOOR``): a word shared
in another sense ("likes" in a file search's "like") must not outrank the tool the request
describes. Scaled by ``known``, so jargon the encoder cannot read keeps its word matches."""
LISTING_COSINE = 0.25
"""A tool no query word reaches is listed only from this cosine on, so nonsense queries
still find nothing."""
VERB_WEIGHT = 0.5
"""How much an action word counts towards coverage: tools doing what was asked are already
preferred by the action match, and a verb inside a name (``git_show``) says little about
the thing asked for."""
UNMATCHED_WEIGHT = 0.3
"""How much a word no tool has counts (names, values: "Alice", "tea"), as a share of a rare
word's weight: it lowers every tool's coverage alike, and it is why coverage is never 1 for
a request that is mostly about something no tool names."""
WEAK = 0.4
"""Scores below this are weak matches: a person sees them labelled, the model is not given
them as tools to load."""


@dataclass(frozen=True, slots=True)
class Signals:
    """What ranked a tool where it is, for people (``--explain``)."""

    score: float
    words: float
    """Share of the request the tool's words cover, 0-1."""
    counted: float
    """How much of that coverage counted: less where the encoder finds the tool unrelated."""
    meaning: float | None
    """Encoder similarity mapped to 0-1; None before the vectors are ready."""
    cosine: float | None
    exact: bool = False
    filter: bool = False

    @classmethod
    def filter_only(cls) -> Signals:
        return cls(1.0, 0.0, 0.0, None, None, filter=True)

    def lines(self) -> list[str]:
        """One short line per signal."""
        if self.filter:
            return ["matches the filter; no words to rank by"]
        if self.exact:
            return ["the query is this tool's name"]
        out = [f"words: covers {self.words:.0%} of the request"]
        if self.counted < self.words - 0.005:
            out[0] += f", counted as {self.counted:.0%}: the meaning is unrelated"
        if self.meaning is None:
            out.append("meaning: not ready yet (the model or the tool vectors are still loading)")
        else:
            out.append(f"meaning: {self.meaning:.2f} (cosine {self.cosine:.2f})")
        return out


@dataclass(frozen=True, slots=True)
class Fused:
    scores: Floats
    words: Floats
    counted: Floats
    meaning: Floats | None
    cosine: Floats | None
    exact: npt.NDArray[np.bool_]
    surfaces: tuple[tuple[tuple[str, ...], Floats | None], ...]

    def matched(self, i: int) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(w for ws, v in self.surfaces if v is not None and v[i] > 0 for w in ws)
        )

    def weak(self, i: int) -> bool:
        return bool(self.scores[i] < WEAK)

    def signals(self, i: int) -> Signals:
        return Signals(
            score=float(self.scores[i]),
            words=float(self.words[i]),
            counted=float(self.counted[i]),
            meaning=float(self.meaning[i]) if self.meaning is not None else None,
            cosine=float(self.cosine[i]) if self.cosine is not None else None,
            exact=bool(self.exact[i]),
        )


def coverage(concepts: Sequence[tuple[Concept, Floats | None, bool]], size: int) -> Floats:
    """Per tool, the rarity-weighted share of the request's concepts it matches."""
    covered = np.zeros(size, dtype=np.float32)
    total = 0.0
    rarest = math.log1p((size + 0.5) / 0.5)
    for _, vector, verb in concepts:
        scale = VERB_WEIGHT if verb else 1.0
        if vector is None:
            total += UNMATCHED_WEIGHT * rarest * scale
            continue
        found = int(np.count_nonzero(vector))
        weight = math.log1p((size - found + 0.5) / (found + 0.5)) * scale
        best = float(vector.max())
        if best > 0:
            covered += (weight / best) * vector
        total += weight
    if total > 0:
        covered /= total
    return covered


def fuse(
    *,
    concepts: Sequence[tuple[Concept, Floats | None, bool]],
    cosine: Floats | None,
    exact: npt.NDArray[np.bool_],
    size: int,
    known: float = 1.0,
) -> Fused:
    """``known`` is the share of the request's words the encoder knows as words: meaning
    counts that much, since a word it has never seen (jargon, a product's name, a typo) is
    read as fragments that match any tool sharing them, and only word matching sees it
    for what it is."""
    words = coverage(concepts, size)
    meaning: Floats | None = None
    counted = words
    if cosine is None:
        scores = WORDS_WEIGHT * words
    else:
        meaning = np.clip((cosine - ENCODER_FLOOR) / (ENCODER_CEIL - ENCODER_FLOOR), 0.0, 1.0)
        related = np.clip(cosine / ENCODER_FLOOR, 0.0, 1.0)
        counted = words * (1.0 - known * UNRELATED_DISCOUNT * (1.0 - related))
        scores = 1.0 - (1.0 - WORDS_WEIGHT * counted) * (1.0 - MEANING_WEIGHT * known * meaning)
        scores[(words <= 0) & (cosine < LISTING_COSINE)] = 0.0
    scores = scores.astype(np.float32)
    scores[exact] = 1.0
    return Fused(
        scores=scores,
        words=words,
        counted=counted,
        meaning=meaning,
        cosine=cosine,
        exact=exact,
        surfaces=tuple((concept.surfaces, vector) for concept, vector, _ in concepts),
    )
