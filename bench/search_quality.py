"""How well bassi's tool search finds the tool a person means.

Loads a corpus of real tool definitions into a Registry and ToolIndex exactly as the app does
(no server processes), waits until every tool's sentence-encoder vector is ready (the app's
steady state: word matching fused with the encoder) and runs a query set against it. Usage,
from the repo root:

    .venv/bin/python bench/search_quality.py \
        --corpus ../shared/bench/corpus bench/corpus/dev bench/corpus/heldout \
        --queries ../shared/bench/queries_dev.jsonl \
        bench/queries_{heldout,other_dev,other_heldout,blind}.jsonl [--json]

The later blind sets' servers are indexed alone (``--corpus bench/corpus/blind2 --queries
bench/queries_blind2.jsonl``, and ``blind3``, ``blind4`` likewise), as the sealed set's were.

One line of figures per query file: a sealed set is reported on its own line. ``--model DIR``
(repeatable) ranks with the encoder in DIR (``mpnet-w8.onnx`` + ``tokenizer.json``, as
``export_encoder.py`` writes them) instead of the shipped one, each model's figures beside the
others'; ``--model shipped`` names the shipped encoder in such a comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bassi.core.registry import Registry
from bassi.core.search import ToolIndex
from bassi.core.search.encoder import SentenceEncoder, default_encoder
from bassi.core.tools import Origin, ToolInfo


def load_registry(*corpora: Path) -> Registry:
    """Every server of every corpus directory."""
    registry = Registry()
    for path in sorted(p for corpus in corpora for p in corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        server = str(data["server"])
        registry.add_server(server, Origin.EXTERNAL, target=str(data.get("package", "")))
        registry.set_tools(server, [ToolInfo.from_mcp(server, t) for t in data["tools"]])
    return registry


def load_queries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def evaluate(
    index: ToolIndex, queries: list[dict[str, Any]], *, fused: bool = True
) -> tuple[dict[str, Any], list[Any]]:
    for q in queries[:5]:
        index.search(q["q"], fused=fused)  # warm caches so latency reflects steady state
    hits = {1: 0, 3: 0, 5: 0}
    reciprocal = 0.0
    judged = 0
    latencies: list[float] = []
    rankings: list[dict[str, Any]] = []
    for q in queries:
        start = time.perf_counter()
        results = index.search(q["q"], limit=10, fused=fused)
        latencies.append((time.perf_counter() - start) * 1000)
        ranked = [h.tool.ref for h in results]
        rankings.append({"q": q["q"], "ranked": ranked})
        expected = set(q.get("expected") or ())
        if not expected:
            continue
        judged += 1
        rank = next((i for i, ref in enumerate(ranked, 1) if ref in expected), None)
        if rank is not None:
            reciprocal += 1 / rank
            for k in hits:
                hits[k] += rank <= k
    summary: dict[str, Any] = {"queries": len(queries)}
    if judged:
        summary.update({f"top{k}": round(v / judged, 3) for k, v in hits.items()})
        summary["mrr10"] = round(reciprocal / judged, 3)
    summary["p50_ms"] = round(statistics.median(latencies), 3) if latencies else 0.0
    summary["p95_ms"] = round(percentile(latencies, 95), 3) if latencies else 0.0
    return summary, rankings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, nargs="+", required=True)
    parser.add_argument("--queries", type=Path, nargs="+", required=True)
    parser.add_argument("--rankings", type=Path, help="write each query's top 10 here")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--lexical", action="store_true", help="do not wait for the encoder: words only"
    )
    parser.add_argument("--model", action="append", help="an encoder directory, or 'shipped'")
    args = parser.parse_args(argv)

    registry = load_registry(*args.corpus)
    summaries: list[dict[str, Any]] = []
    rankings: list[Any] = []
    for model in args.model or ["shipped"]:
        encoder = default_encoder() if model == "shipped" else SentenceEncoder(Path(model))
        with tempfile.TemporaryDirectory() as cache:  # the app always has an on-disk cache
            index = ToolIndex(Path(cache), encoder=encoder)
            start = time.perf_counter()
            index.sync(registry)
            build_s = time.perf_counter() - start
            fused = not args.lexical and index.wait_semantic()
            semantic_s = time.perf_counter() - start
            for path in args.queries:
                summary, ranked = evaluate(index, load_queries(path), fused=fused)
                summaries.append({"model": model, "file": path.name, **summary, "fused": fused})
                rankings += [{"model": model, **r} for r in ranked]
        if not args.json:
            print(
                f"{model}: {len(index)} tools indexed in {build_s:.3f} s, "
                + (f"encoder vectors ready in {semantic_s:.3f} s" if fused else "words only")
            )

    if args.rankings:
        with args.rankings.open("w", encoding="utf-8") as out:
            for row in rankings:
                out.write(json.dumps(row) + "\n")
    if args.json:
        print(json.dumps(summaries))
        return 0
    for row in summaries:
        figures = (
            f"top-1 {row['top1']:.3f}  top-3 {row['top3']:.3f}  top-5 {row['top5']:.3f}  "
            f"MRR@10 {row['mrr10']:.3f}  "
            if "top1" in row
            else ""
        )
        print(
            f"{row['model']} {row['file']} ({row['queries']} queries): {figures}"
            f"p50 {row['p50_ms']:.2f} ms  p95 {row['p95_ms']:.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
