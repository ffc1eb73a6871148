"""Every tool's meaning vector, kept once as float16 and multiplied in float32 by chunks.

The per-server float16 arrays the worker publishes (what the disk cache stores) are the only
copy: a float32 matrix of every tool next to them would hold another 15 MB at 10,000 tools
(the memory target has no room for it), and rebuilding it as servers' vectors arrive would
briefly hold two. A query widens ``CHUNK_ROWS`` rows at a time into one small scratch buffer
instead, which costs ~1 ms per query at 10,000 tools.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bassi.core.search.encoder import DIMENSIONS, Vectors
from bassi.core.search.vector_cache import HalfVectors

CHUNK_ROWS = 1024
"""Rows widened per step: the scratch buffer (1.5 MB) stays in cache."""

_SIGN_AND_BITS = np.int32(-0x70000001)
"""0x8FFFFFFF: a float16's sign-extended bits shifted into float32 place, minus the three
copies of its sign that land in the exponent."""
_BIAS = np.float32(2.0**112)
"""float32's exponent bias minus float16's, as a factor."""

Floats = npt.NDArray[np.float32]


def widen(bits: npt.NDArray[np.int32]) -> Floats:
    """Float16 values, loaded sign-extended into ``bits``, as float32 in place (a view).

    numpy's own float16 cast is scalar, ~6 ms for 10,000 x 384 values on the benchmark
    machine; these three vectorised integer and float passes take ~1 ms and give exactly
    the same floats, subnormals and signed zeros included: shifted 13 bits left, a float16's
    exponent and mantissa sit where float32's go, so the float32 they spell is the value
    times 2**-112, and multiplying by a power of two is exact."""
    bits <<= 13
    bits &= _SIGN_AND_BITS
    values: Floats = bits.view(np.float32)
    values *= _BIAS
    return values


class HalfRows:
    """``rows`` tool vectors in index order, of which ``blocks`` (first row, float16 vectors)
    are known; the rest count as zero."""

    def __init__(self, blocks: Sequence[tuple[int, HalfVectors]], rows: int) -> None:
        self.rows = rows
        present = [np.arange(r, r + len(v), dtype=np.int32) for r, v in blocks]
        self._positions = np.concatenate(present) if present else np.zeros(0, dtype=np.int32)
        self._chunks: list[tuple[int, list[npt.NDArray[np.int16]]]] = []
        chunk: list[npt.NDArray[np.int16]] = []
        filled = 0
        for _, vectors in blocks:
            bits = vectors.view(np.int16)
            while len(bits):
                piece, bits = bits[: CHUNK_ROWS - filled], bits[CHUNK_ROWS - filled :]
                chunk.append(piece)
                filled += len(piece)
                if filled == CHUNK_ROWS:
                    self._chunks.append((filled, chunk))
                    chunk, filled = [], 0
        if chunk:
            self._chunks.append((filled, chunk))
        self._scratch = np.empty(
            (min(len(self._positions), CHUNK_ROWS), DIMENSIONS), dtype=np.int32
        )

    def dot(self, query: Vectors) -> Floats:
        """Each row's dot product with ``query`` (its cosine: both are unit length)."""
        packed = np.empty(len(self._positions), dtype=np.float32)
        done = 0
        for count, pieces in self._chunks:
            bits = self._scratch[:count]
            np.concatenate(pieces, out=bits, casting="safe")
            # einsum, not BLAS: a multi-threaded BLAS call on a busy 2-core machine was
            # measured at 20 ms where this single-threaded loop takes 2 ms at 10,000 tools
            np.einsum("ij,j->i", widen(bits), query, out=packed[done : done + count])
            done += count
        out = np.zeros(self.rows, dtype=np.float32)
        out[self._positions] = packed
        return out
