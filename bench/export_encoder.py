"""Export the fine-tuned sentence encoder to the ONNX model bassi ships
(``bassi/core/search/models/``: ``mpnet-w8.onnx`` + ``tokenizer.json``, written to ``--out``;
copy them there, update ``SHA256SUMS`` and bump ``vector_cache.FORMAT`` so cached tool
vectors are recomputed).

Offline, once, and never in the project venv: it needs torch, which bassi must not depend on.
``--model`` is a sentence-transformers directory that ``train_encoder.py`` wrote (all-mpnet-
base-v2 fine-tuned on how people ask for tools). Set up a scratch venv:

    python3.11 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.14.1 onnx onnx_ir onnxruntime tokenizers \
        sentence-transformers==6.2.0 datasets accelerate
    /tmp/distill-venv/bin/python bench/export_encoder.py --model DIR \
        --out bassi/core/search/models

Mean pooling over the attention mask and L2 normalisation are part of the exported graph, so
the runtime only tokenises and runs one session. The weights of every matrix product are
stored as 8-bit integers in blocks of 128, each block with its own scale and zero point, and
multiplied with activations quantised per block as well (onnxruntime's ``MatMulNBits``,
accuracy level 4); the token embeddings are int8. 440 MB of float32 becomes 113 MB. Per-tensor
dynamic int8 (what the earlier MiniLM used) keeps only 0.87-0.91 cosine against float32 on
MPNet, whose activations have outlying channels, and lost most of what fine-tuning won. Per
block, the cosine is printed at the end, over ``_CHECK``: 0.9993-0.9995 with a zero point.
Without one (symmetric blocks, used until the eleventh session) it was 0.97-0.99 for a model
fine-tuned from an exported one, whose changes are smaller than a step of the old grid, and
the quantised model lost what that fine-tuning had won; it is no slower with one.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

MAX_TOKENS = 128
"""A tool's first sentences and parameter names fit easily; training used 96."""
MODEL_FILE = "mpnet-w8.onnx"
BLOCK = 128
_CHECK = [
    "did the accountant email me anything this week?",
    "list-mail-messages: List messages in the signed-in user's mailbox",
    "is my working copy clean",
    "github create pull request: Create a new pull request in a GitHub repository. "
    "Parameters: owner, repo, title, body, head, base, draft",
    "drop the staging table and start over",
]


def main() -> int:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="a sentence-transformers dir")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    source = args.model

    class Pooled(torch.nn.Module):
        """The transformer plus sentence-transformers' mean pooling and normalisation."""

        def __init__(self) -> None:
            super().__init__()
            # eager attention: the SDPA path traces into a graph that ignores padding masks
            self.encoder = AutoModel.from_pretrained(
                str(source), local_files_only=True, attn_implementation="eager"
            ).eval()

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask
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
    encoded = [tokenizer.encode(text) for text in _CHECK]
    ids = torch.tensor([encoded[0].ids], dtype=torch.int64)
    mask = torch.tensor([encoded[0].attention_mask], dtype=torch.int64)
    with tempfile.TemporaryDirectory() as tmp:
        float_path = Path(tmp) / "f32.onnx"
        torch.onnx.export(
            Pooled(),
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
        config = DefaultWeightOnlyQuantConfig(
            block_size=BLOCK, is_symmetric=False, bits=8, accuracy_level=4
        )
        blocks = MatMulNBitsQuantizer(
            onnx.load(str(float_path)),
            bits=8,
            block_size=BLOCK,
            is_symmetric=False,
            accuracy_level=4,
            algo_config=config,
        )
        blocks.process()
        blocked_path = Path(tmp) / "blocks.onnx"
        blocks.model.save_model_to_file(str(blocked_path), use_external_data_format=False)
        quantised = args.out / MODEL_FILE
        quantize_dynamic(
            str(blocked_path),
            str(quantised),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["Gather"],
        )

    session = ort.InferenceSession(str(quantised), providers=["CPUExecutionProvider"])
    got = np.stack(
        [
            session.run(
                None,
                {
                    "input_ids": np.array([e.ids], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                },
            )[0][0]
            for e in encoded
        ]
    )
    agreement = (got * reference).sum(axis=1)
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
