"""A sentence encoder for requests that share no word with the tool they want ("did the
accountant email me anything" -> ``list-mail-messages``), where word matching cannot help.

The model is all-mpnet-base-v2 (Apache-2.0) fine-tuned on how people ask for tools
(``bench/train_encoder.py``), exported to ONNX with mean pooling and normalisation inside the
graph and its weights quantised to 8 bits per block (``bench/export_encoder.py`` made
``models/``). It runs offline through onnxruntime on one thread, so a search never fights the
UI for the second core (about 10 ms for a request), and loads on first use: ``import
onnxruntime`` alone costs ~170 ms and the model ~0.3 s, which ``bassi tools`` and an app that
never searches should not pay.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
DIMENSIONS = 768
"""The shipped model's vector size: a model of another size needs it and
``vector_cache.FORMAT`` changed with it."""
MAX_CHARS = 2_000
"""The tokenizer keeps 128 tokens anyway; cutting first keeps a megabyte description from
costing a megabyte of tokenising."""
MODEL_FILE = "mpnet-w8.onnx"
TOKENIZER_FILE = "tokenizer.json"


class SentenceEncoder:
    """Unit-length, mean-pooled sentence vectors: the dot product of two is their cosine.

    Safe to share between threads: loading is locked, and onnxruntime sessions and tokenizers
    may run concurrently."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = model_dir
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def load(self) -> None:
        """Read the model now rather than on the first ``encode`` (~0.3 s, ~190 MB)."""
        self._load()

    def _load(self) -> tuple[Any, Any]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
                options = ort.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # one short text per run: an arena and memory patterns only hold ~8 MB more
                options.enable_cpu_mem_arena = False
                options.enable_mem_pattern = False
                session = ort.InferenceSession(
                    str(self.model_dir / MODEL_FILE), options, providers=["CPUExecutionProvider"]
                )
                self._loaded = (tokenizer, session)
            return self._loaded

    def encode(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order.

        Each text runs alone: dynamic int8 quantisation scales activations per run, so in a
        padded batch a text's vector would depend on its neighbours (cosine 0.96-0.99 to its
        own), which a per-server vector cache cannot allow. Alone is also faster on one
        thread: no padding to compute."""
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


@cache
def default_encoder() -> SentenceEncoder:
    """The encoder shipped with bassi, shared by every index in the process (one model in
    memory)."""
    return SentenceEncoder(Path(str(resources.files(__package__).joinpath("models"))))


@cache
def known_words() -> frozenset[str]:
    """The whole words of the model's vocabulary (24,000 common English words and names):
    a word here is a real word, not a typo to correct, even when no tool uses it
    ("contract"). Read straight from ``tokenizer.json``, without loading the model."""
    path = resources.files(__package__).joinpath("models", TOKENIZER_FILE)
    vocabulary = json.loads(path.read_text("utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocabulary if not w.startswith("##"))
