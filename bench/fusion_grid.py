"""The fusion constants against every query set, side by side: how words and meaning are
weighed (``bassi/core/search/fusion.py``). Each setting resets the others to the defaults.
From the repo root:

    .venv/bin/python bench/fusion_grid.py [--model DIR] [--json]

``--model`` ranks with the encoder in DIR (as ``export_encoder.py`` writes it) instead of the
shipped one: a new encoder's cosines sit elsewhere, and the constants that map them move.

Development sets only: ``bench/queries_other_heldout.jsonl`` (servers in
``bench/corpus/heldout``) is kept out of tuning and measured by ``search_quality.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from search_quality import evaluate, load_queries, load_registry

from bassi.core.search import ToolIndex, fusion
from bassi.core.search.encoder import SentenceEncoder

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared" / "bench"
QUERIES = {
    "dev": SHARED / "queries_dev.jsonl",
    "heldout": ROOT / "queries_heldout.jsonl",
    "blind": ROOT / "queries_blind.jsonl",
    "other-dev": ROOT / "queries_other_dev.jsonl",
}
GRID: list[dict[str, float]] = [
    {},
    {"WORDS_WEIGHT": 0.4},
    {"WORDS_WEIGHT": 0.8},
    {"MEANING_WEIGHT": 0.7},
    {"ENCODER_CEIL": 0.6},
    {"ENCODER_CEIL": 0.8},
    {"ENCODER_FLOOR": 0.1},
    {"ENCODER_FLOOR": 0.3},
    {"UNMATCHED_WEIGHT": 0.6},
    {"VERB_WEIGHT": 1.0},
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--model", type=Path, help="an encoder directory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    corpora = [args.shared / "corpus", ROOT / "corpus" / "dev"]
    queries = {k: load_queries(v) for k, v in QUERIES.items() if v.exists()}
    defaults = {name: getattr(fusion, name) for g in GRID for name in g}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as cache:
        encoder = SentenceEncoder(args.model) if args.model else None
        index = ToolIndex(Path(cache) / "index", encoder=encoder)
        index.sync(load_registry(*corpora))
        index.wait_semantic()
        for setting in GRID:
            for name, value in {**defaults, **setting}.items():
                setattr(fusion, name, value)
            row: dict[str, Any] = {"setting": setting or "defaults"}
            for label, qs in queries.items():
                summary, _ = evaluate(index, qs)
                row[label] = [summary["top1"], summary["top3"], summary["mrr10"]]
            rows.append(row)
            if not args.json:
                sets = " | ".join(
                    f"{k} {v[0]:.3f}/{v[1]:.3f}/{v[2]:.3f}"
                    for k, v in row.items()
                    if k != "setting"
                )
                print(f"{row['setting']}: {sets}", flush=True)
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
