"""A real sentence encoder (all-MiniLM-L6-v2, int8 ONNX) for queries that share no word with
the tool they want, where averaged static token vectors miss what a sentence means.

Written as the runtime module ``bassi/core/search/encoder.py`` would be, but kept under
``bench/`` until the measurements (``bench/encoder_eval.py``) justify shipping it: it needs
``onnxruntime`` and ``tokenizers``, which bassi does not depend on, and the model files
made by ``bench/export_encoder.py``. It runs on one thread so a search never fights the UI
for the second core, and loads on first use so an app that never needs it never pays the
~60 MB it adds to RSS.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
DIMENSIONS = 384
MAX_CHARS = 2_000
"""The tokenizer keeps 128 tokens anyway; cutting first keeps a megabyte description from
costing a megabyte of tokenising."""
MODEL_FILE = "minilm-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"


class SentenceEncoder:
    """Normalised, mean-pooled sentence vectors: the dot product of two is their cosine."""

    def __init__(self, model_dir: Path, *, threads: int = 1) -> None:
        self._dir = model_dir
        self._threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self._dir / TOKENIZER_FILE))
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                session = ort.InferenceSession(
                    str(self._dir / MODEL_FILE), options, providers=["CPUExecutionProvider"]
                )
                self._loaded = (tokenizer, session)
            return self._loaded

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit-length row per text, in order. Empty text gets the vector of no words.

        Each text runs alone: dynamic int8 quantisation scales activations per run, so in a
        padded batch a text's vector would depend on its neighbours (cosine 0.96-0.99 to its
        own), which a per-server vector cache cannot allow. Alone is also faster on one
        thread: no padding to compute (47 against 61 CPU-seconds per 10,000 tools)."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        tokenizer, session = self._load()
        for row, text in enumerate(texts):
            encoded = tokenizer.encode(text[:MAX_CHARS])
            ids = np.array([encoded.ids], dtype=np.int64)
            mask = np.array([encoded.attention_mask], dtype=np.int64)
            (vectors,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
            out[row] = vectors[0]
        return out
