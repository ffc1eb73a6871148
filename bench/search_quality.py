"""How well bassi's tool search finds the tool a person means.

Loads a corpus of real tool definitions into a Registry and ToolIndex exactly as the app does
(no server processes), waits until every tool's sentence-encoder vector is ready (the app's
steady state: word matching fused with the encoder) and runs a query set against it. Usage,
from the repo root:

    .venv/bin/python bench/search_quality.py --corpus ../shared/bench/corpus \
        --queries ../shared/bench/queries_dev.jsonl [--rankings OUT.jsonl] [--json]
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


def evaluate(index: ToolIndex, queries: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    for q in queries[:5]:
        index.search(q["q"])  # warm caches so latency reflects steady state
    hits = {1: 0, 3: 0, 5: 0}
    reciprocal = 0.0
    judged = 0
    latencies: list[float] = []
    rankings: list[dict[str, Any]] = []
    for q in queries:
        start = time.perf_counter()
        results = index.search(q["q"], limit=10)
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
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--rankings", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--lexical", action="store_true", help="do not wait for the encoder: words only"
    )
    args = parser.parse_args(argv)

    registry = load_registry(*args.corpus)
    with tempfile.TemporaryDirectory() as cache:  # the app always has an on-disk cache
        index = ToolIndex(Path(cache))
        start = time.perf_counter()
        index.sync(registry)
        build_s = time.perf_counter() - start
        fused = not args.lexical and index.wait_semantic()
        semantic_s = time.perf_counter() - start
        summary, rankings = evaluate(index, load_queries(args.queries))
    summary["fused"] = fused

    if args.rankings:
        with args.rankings.open("w", encoding="utf-8") as out:
            for row in rankings:
                out.write(json.dumps(row) + "\n")
    if args.json:
        print(json.dumps(summary))
        return 0
    print(
        f"{len(index)} tools indexed in {build_s:.3f} s, "
        + (f"encoder vectors ready in {semantic_s:.3f} s" if fused else "words only (not fused)")
        + f"; {summary['queries']} queries"
    )
    if "top1" in summary:
        print(
            f"top-1 {summary['top1']:.3f}  top-3 {summary['top3']:.3f}  "
            f"top-5 {summary['top5']:.3f}  MRR@10 {summary['mrr10']:.3f}"
        )
    print(f"latency p50 {summary['p50_ms']:.2f} ms  p95 {summary['p95_ms']:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
