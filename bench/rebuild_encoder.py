"""Rebuild a float sentence-transformers model from the shipped ONNX encoder, so that a new
round of fine-tuning can start from what bassi ships without redoing the earlier rounds.

Only the quantised ONNX file is kept (``bassi/core/search/models``); the float model it was
exported from lives in a scratch directory and is gone by the next session. The ONNX file
holds every weight: the matrix products as 8-bit blocks with their scales (and zero points,
since the eleventh session), the embeddings as int8 with one scale, the biases and layer
norms as float. Dequantised into all-mpnet-base-v2's architecture, the rebuilt model's
vectors keep 0.9996 cosine to the shipped ONNX's (printed at the end).

Offline, in the scratch venv of ``export_encoder.py``, with the base model's directory (for
its architecture, tokenizer and pooling; ``train_encoder.py`` says where it comes from):

    /tmp/distill-venv/bin/python bench/rebuild_encoder.py --base /tmp/mpnet/all-mpnet-base-v2 \
        --out /tmp/tool-mpnet-shipped
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from export_encoder import _CHECK

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "bassi" / "core" / "search" / "models"
_EMBEDDINGS = (
    "embeddings.word_embeddings",
    "embeddings.position_embeddings",
    "encoder.relative_attention_bias",
)


def main() -> int:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper
    from sentence_transformers import SentenceTransformer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="all-mpnet-base-v2's dir")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--onnx", type=Path, default=MODELS / "mpnet-w8.onnx")
    args = parser.parse_args()

    graph = onnx.load(str(args.onnx)).graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    model = SentenceTransformer(str(args.base), device="cpu", local_files_only=True)
    params = dict(model[0].auto_model.named_parameters())
    filled: set[str] = set()

    def put(name: str, value: np.ndarray) -> None:
        target = params[name]
        if tuple(target.shape) != value.shape:
            raise SystemExit(f"{name}: {tuple(target.shape)} in the model, {value.shape} in ONNX")
        with torch.no_grad():
            target.copy_(torch.from_numpy(value.astype(np.float32)))
        filled.add(name)

    prefix = "encoder."  # export_encoder.py's wrapper module holds the model as ``encoder``
    for name, value in weights.items():
        if name.startswith(prefix) and not name.endswith(("_scale", "_zero_point", "_quantized")):
            put(name.removeprefix(prefix), value)
    for name in _EMBEDDINGS:
        quantised = weights[f"{prefix}{name}.weight_quantized"].astype(np.float32)
        zero = weights[f"{prefix}{name}.weight_zero_point"].astype(np.float32)
        put(f"{name}.weight", (quantised - zero) * weights[f"{prefix}{name}.weight_scale"])
    for node in graph.node:
        if node.op_type != "MatMulNBits":
            continue
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if attrs["bits"] != 8:
            raise SystemExit(f"{node.name}: {attrs['bits']}-bit blocks are not handled")
        rows, columns, block = attrs["N"], attrs["K"], attrs["block_size"]
        blocks = weights[node.input[1]].astype(np.float32).reshape(rows, -1, block)
        scales = weights[node.input[2]].astype(np.float32).reshape(rows, -1, 1)
        zero = 128.0  # MatMulNBits' default for 8 bits without zero points
        if len(node.input) > 3 and node.input[3]:
            zero = weights[node.input[3]].astype(np.float32).reshape(rows, -1, 1)
        matrix = ((blocks - zero) * scales).reshape(rows, -1)[:, :columns]
        # "/encoder/encoder/layer.0/attention/attn/q/MatMul_Q8": encoder.layer.0.attention.attn.q
        put(".".join(node.name.split("/")[2:-1]) + ".weight", matrix)
    missing = sorted(n for n in set(params) - filled if not n.startswith("pooler."))
    if missing:
        raise SystemExit(f"not in the ONNX file: {missing}")
    model.save(str(args.out))

    session = ort.InferenceSession(str(args.onnx), providers=["CPUExecutionProvider"])
    tokenizer = model.tokenizer
    rebuilt = model.encode(_CHECK, normalize_embeddings=True)
    agreement = []
    for text, vector in zip(_CHECK, rebuilt, strict=True):
        encoded = tokenizer(text, return_tensors="np")
        (shipped,) = session.run(
            None,
            {
                "input_ids": encoded["input_ids"].astype(np.int64),
                "attention_mask": encoded["attention_mask"].astype(np.int64),
            },
        )
        agreement.append(round(float(shipped[0] @ vector), 4))
    print(json.dumps({"out": str(args.out), "cosine_vs_onnx": agreement}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
