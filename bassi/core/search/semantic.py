"""Meaning-level similarity from static token vectors, for queries that share no word with
the tool they want ("is my working copy clean" -> ``git_status``).

The vectors were distilled offline from all-MiniLM-L6-v2 (see
``bench/distill_token_vectors.py``): each WordPiece token's vector is stored as int8 with a
per-token scale, and a text's vector is the scaled mean of its tokens' rows. No model runs
here, nothing is downloaded, and the only dependency is numpy.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
MAX_TOKENS = 256
"""A text's first tokens say what it is about; the rest would only cost time."""
_WORD = re.compile(r"\w+|[^\w\s]")
_MAX_WORD = 100


class TokenVectors:
    def __init__(self, pieces: list[str], vectors: npt.NDArray[np.int8], scales: Vector) -> None:
        self._ids = {p: i for i, p in enumerate(pieces)}
        self._vectors = vectors
        self._scales = scales
        self._unknown = self._ids.get("[UNK]", 0)
        self._word_cache: dict[str, tuple[int, ...]] = {}
        self.dimensions = int(vectors.shape[1])

    def knows(self, word: str) -> bool:
        """Whether ``word`` (lowercase) is a whole word of the model's vocabulary: a real
        word, so not a typo to correct even when no tool uses it ("contract")."""
        return word in self._ids

    def _pieces(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match WordPiece, as BERT's tokenizer does."""
        found = self._word_cache.get(word)
        if found is not None:
            return found
        ids: list[int] = []
        start = 0
        while start < len(word) and len(word) <= _MAX_WORD:
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self._ids:
                    ids.append(self._ids[piece])
                    break
                end -= 1
            else:
                ids = [self._unknown]
                break
            start = end
        result = tuple(ids) or (self._unknown,)
        if len(self._word_cache) < 100_000:
            self._word_cache[word] = result
        return result

    def token_ids(self, text: str) -> list[int]:
        if not text.isascii():
            text = "".join(
                c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
            )
        ids: list[int] = []
        for word in _WORD.findall(text.lower()):
            ids.extend(self._pieces(word))
            if len(ids) >= MAX_TOKENS:
                break
        return ids[:MAX_TOKENS]

    def embed(self, text: str) -> Vector:
        """Unit-length vector of ``text`` (all zeros for text without tokens)."""
        ids = self.token_ids(text)
        if not ids:
            return np.zeros(self.dimensions, dtype=np.float32)
        rows = self._vectors[ids].astype(np.float32) * self._scales[ids, None]
        vector: Vector = rows.mean(axis=0)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def embed_many(self, texts: list[str]) -> Vector:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self.embed(text)
        return out


@cache
def default_vectors() -> TokenVectors:
    here = resources.files(__package__)
    pieces = here.joinpath("wordpieces.txt").read_text("utf-8").splitlines()
    with here.joinpath("token_vectors.npy").open("rb") as f:
        vectors = np.load(f)
    with here.joinpath("token_scales.npy").open("rb") as f:
        scales = np.load(f)
    return TokenVectors(pieces, vectors, scales)
