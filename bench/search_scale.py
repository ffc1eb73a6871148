"""How bassi's tool index scales: start-up (searchable by words, then fused with the sentence
encoder), query latency by words alone and fused, and memory at 1,000 and 10,000 tools.
(No re-ranker is shipped: no registry package carries a cross-encoder, see bench/README.md.)

The real corpus is replicated under new server names until the wanted size is reached. Each
size runs a cold start (empty cache) and then a warm one (nothing changed), each in a fresh
subprocess, so neither memory figures nor the loaded model carry over.
From the repo root:

    .venv/bin/python bench/search_scale.py [--corpus ../shared/bench/corpus] [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from corpus_server import DEFAULT_CORPUS, corpus_servers
from search_quality import load_queries, percentile

from bassi.core.registry import Registry
from bassi.core.search import ToolIndex
from bassi.core.tools import Origin, ToolInfo

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QUERIES = ROOT.parent / "shared" / "bench" / "queries_dev.jsonl"


def replicated_registry(corpus: Path, size: int) -> Registry:
    """``size`` tools: the corpus servers again and again as ``<server>-<copy>``."""
    servers = [(str(data["server"]), list(data["tools"])) for data in corpus_servers(corpus)]
    registry = Registry()
    total = copy = 0
    while total < size:
        for server, tools in servers:
            if total >= size:
                break
            name = f"{server}-{copy}"
            taken = tools[: size - total]
            registry.add_server(name, Origin.EXTERNAL)
            registry.set_tools(name, [ToolInfo.from_mcp(name, t) for t in taken])
            total += len(taken)
        copy += 1
    return registry


def _rss_kb(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    """Make VmHWM start again from the current RSS (Linux >= 4.0)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def measure(corpus: Path, queries: Path, size: int, cache: Path, phase: str) -> dict[str, Any]:
    """One start of the app's index over ``cache``: ``cold`` (empty) or ``warm`` (as the
    previous start left it). Every server is submitted as the app's catalog does; searchable
    is when the index's thread has swapped them all in (words only), recorded when it has
    also written them to the Whoosh index of record, semantic-ready when every tool's encoder
    vector is in and queries are fused. CPU seconds include the background threads'."""
    registry = replicated_registry(corpus, size)
    texts = [q["q"] for q in load_queries(queries)]
    gc.collect()
    base = _rss_kb("VmRSS")
    _reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    index = ToolIndex(cache)
    for entry in registry.servers():
        index.submit(entry.name, entry.tools)
    while index.indexing:
        time.sleep(0.002)
    searchable_s, searchable_cpu = time.perf_counter() - start, time.process_time() - cpu
    searchable_peak = _rss_kb("VmHWM") - base
    index.wait_indexed()
    recorded_s = time.perf_counter() - start
    fused = index.wait_semantic()
    semantic_s, semantic_cpu = time.perf_counter() - start, time.process_time() - cpu
    latency: dict[str, list[float]] = {"lexical": [], "fused": []}
    for mode, times in latency.items():
        for text in texts[:10]:
            index.search(text, fused=mode == "fused")
        for _ in range(3):
            for text in texts:
                begin = time.perf_counter()
                index.search(text, fused=mode == "fused")
                times.append((time.perf_counter() - begin) * 1000)
    return {
        "phase": phase,
        "tools": len(index),
        "servers": len(registry.servers()),
        "searchable_s": round(searchable_s, 3),
        "searchable_cpu_s": round(searchable_cpu, 3),
        "recorded_s": round(recorded_s, 3),
        "semantic_ready_s": round(semantic_s, 3),
        "semantic_ready_cpu_s": round(semantic_cpu, 3),
        "fused": fused,
        "from_cache": index.stats.from_cache,
        "analysed": index.stats.analysed,
        **{
            f"{mode}_{name}_ms": round(value, 3)
            for mode, times in latency.items()
            for name, value in (
                ("p50", statistics.median(times)),
                ("p95", percentile(times, 95)),
            )
        },
        "searchable_peak_rss_added_mb": round(searchable_peak / 1024, 1),
        "peak_rss_added_mb": round((_rss_kb("VmHWM") - base) / 1024, 1),
        "rss_added_mb": round((_rss_kb("VmRSS") - base) / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=["cold", "warm"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.one:
        result = measure(args.corpus, args.queries, args.one, args.cache, args.phase)
        print(json.dumps(result))
        return 0
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as cache:
            for phase in ("cold", "warm"):
                command = [sys.executable, __file__, "--corpus", str(args.corpus)]
                command += ["--queries", str(args.queries), "--one", str(size)]
                command += ["--cache", str(Path(cache) / "index"), "--phase", phase]
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    return done.returncode
                results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(results))
        return 0
    for r in results:
        print(
            f"{r['tools']:>6} tools ({r['servers']} servers) {r['phase']}: "
            f"searchable {r['searchable_s']:.2f} s (cpu {r['searchable_cpu_s']:.2f}), "
            f"in the Whoosh index {r['recorded_s']:.2f} s, "
            f"semantic-ready {r['semantic_ready_s']:.2f} s (cpu {r['semantic_ready_cpu_s']:.2f})"
            f"{'' if r['fused'] else ' FAILED'}, "
            f"{r['from_cache']} servers from cache / {r['analysed']} analysed, "
            f"query p50/p95 lexical {r['lexical_p50_ms']:.2f}/{r['lexical_p95_ms']:.2f} ms, "
            f"fused {r['fused_p50_ms']:.2f}/{r['fused_p95_ms']:.2f} ms, "
            f"peak RSS added {r['searchable_peak_rss_added_mb']:.0f} MB searchable / "
            f"{r['peak_rss_added_mb']:.0f} MB overall ({r['rss_added_mb']:.0f} MB held)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
