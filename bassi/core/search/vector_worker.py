"""Tool vectors computed in a process of their own.

Encoding ten thousand tools is about twenty-five seconds of CPU. On a thread of the app,
onnxruntime releases the interpreter lock while it computes, but it still takes one of the
machine's cores at the app's own weight the whole time servers start, and takes the lock back
between texts: on two cores the screen stalled for 70-90 ms at a time while a cold project's
servers connected (``bench/loop_lag.py``). In a helper process at the least CPU weight it only
gets what the screen and the starting servers leave.

The child loads the same model files as the app and encodes each text alone, exactly as
``SentenceEncoder.encode`` does in the app (a text's vector never depends on where it was
computed, which the per-server vector cache relies on): a JSON list of texts in, their float32
rows out as raw bytes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np

from bassi.core.helper_process import HelperProcess
from bassi.core.search.encoder import DIMENSIONS, MAX_CHARS, SentenceEncoder, Vectors

_ROW_BYTES = DIMENSIONS * np.dtype(np.float32).itemsize


class VectorWorker(HelperProcess):
    """The parent's handle on the child, used from the tool-vectors thread."""

    def __init__(self, model_dir: Path) -> None:
        super().__init__(__name__, str(model_dir), purpose="the tool encoder")

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order. Raises OSError when the child
        cannot be started or stops answering. Each text goes as far as the model reads it."""
        line = json.dumps([t[:MAX_CHARS] for t in texts], ensure_ascii=True).encode("ascii")
        answer = self.request(line, reply_size=len(texts) * _ROW_BYTES)
        return np.frombuffer(answer, dtype=np.float32).reshape(len(texts), DIMENSIONS)


def serve(encoder: SentenceEncoder, source: IO[bytes], sink: IO[bytes]) -> None:
    """The child: a list of texts in, their rows out."""
    for line in source:
        texts = [str(text) for text in json.loads(line)]
        sink.write(encoder.encode(texts).astype(np.float32).tobytes())
        sink.flush()


if __name__ == "__main__":
    from bassi.core.cpu_priority import lower_this_process

    lower_this_process()
    serve(SentenceEncoder(Path(sys.argv[1])), sys.stdin.buffer, sys.stdout.buffer)
