"""How the lexical ranking and the sentence encoder are best weighed against each other.

Runs every query set through ``ToolIndex.search`` (the app's code path, vectors ready) for a
small grid of the fusion constants in ``bassi.core.search.index`` and prints top-1, top-3 and
MRR@10 per set. Pick a setting inside a flat region of the grid, not the single peak: the
project is judged on queries nobody tuned on. From the repo root:

    .venv/bin/python bench/fusion_grid.py [--corpus ../shared/bench/corpus] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from search_quality import evaluate, load_queries, load_registry

from bassi.core.search import ToolIndex
from bassi.core.search import index as index_module

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "dev": ROOT.parent / "shared/bench/queries_dev.jsonl",
    "heldout": ROOT / "bench/queries_heldout.jsonl",
    "blind": ROOT / "bench/queries_blind.jsonl",
}
GRID = {
    "ENCODER_WEIGHT": [0.0, 1.0, 1.5, 2.0, 3.0, 4.0],
    "ENCODER_FLOOR": [0.0, 0.1, 0.2],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/bench/corpus")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    queries = {name: load_queries(path) for name, path in SETS.items()}
    results: list[dict[str, Any]] = []
    if not args.json:
        print(f"{'':40}" + "".join(f"{name + ' t1/t3/mrr':>22}" for name in queries))
    with tempfile.TemporaryDirectory() as cache:
        index = ToolIndex(Path(cache))
        index.sync(load_registry(args.corpus))
        if not index.wait_semantic():
            print("tool vectors unavailable", file=sys.stderr)
            return 1
        for values in itertools.product(*GRID.values()):
            setting = dict(zip(GRID, values, strict=True))
            for name, value in setting.items():
                setattr(index_module, name, value)
            row: dict[str, Any] = {"setting": setting}
            for name, rows in queries.items():
                summary, _ = evaluate(index, rows)
                row[name] = {k: summary[k] for k in ("top1", "top3", "mrr10")}
            results.append(row)
            if not args.json:
                cells = "".join(
                    f"{row[n]['top1']:>8.3f}{row[n]['top3']:>7.3f}{row[n]['mrr10']:>7.3f}"
                    for n in queries
                )
                label = " ".join(f"{k.lower()}={v:g}" for k, v in setting.items())
                print(f"{label:40}{cells}", flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
