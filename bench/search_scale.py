"""How bassi's tool index scales: build time, start-up from the on-disk cache, query latency
and memory at 1,000 and 10,000 tools.

The real corpus is replicated under new server names until the wanted size is reached. Each
size runs in a fresh subprocess so memory figures are not polluted by the previous one.
From the repo root:

    .venv/bin/python bench/search_scale.py [--corpus ../shared/bench/corpus] [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

from search_quality import load_queries, percentile

from bassi.core.registry import Registry
from bassi.core.search import ToolIndex
from bassi.core.tools import Origin, ToolInfo

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "bench" / "corpus"
DEFAULT_QUERIES = ROOT.parent / "shared" / "bench" / "queries_dev.jsonl"


def replicated_registry(corpus: Path, size: int) -> Registry:
    """``size`` tools: the corpus servers again and again as ``<server>-<copy>``."""
    servers = []
    for path in sorted(corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        servers.append((str(data["server"]), list(data["tools"])))
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


def measure(corpus: Path, queries: Path, size: int) -> dict[str, Any]:
    registry = replicated_registry(corpus, size)
    texts = [q["q"] for q in load_queries(queries)]
    with tempfile.TemporaryDirectory() as cache:
        gc.collect()
        base = _rss_kb("VmRSS")
        _reset_peak()
        start, cpu = time.perf_counter(), time.process_time()
        cold = ToolIndex(Path(cache))
        cold.sync(registry)
        cold_s, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
        cold_peak = _rss_kb("VmHWM") - base
        del cold
        gc.collect()

        base = _rss_kb("VmRSS")
        _reset_peak()
        start, cpu = time.perf_counter(), time.process_time()
        warm = ToolIndex(Path(cache))
        warm.sync(registry)
        warm_s, warm_cpu = time.perf_counter() - start, time.process_time() - cpu
        warm_peak = _rss_kb("VmHWM") - base
        stats = warm.stats

        for text in texts[:10]:
            warm.search(text)
        latencies = []
        for _ in range(3):
            for text in texts:
                start = time.perf_counter()
                warm.search(text)
                latencies.append((time.perf_counter() - start) * 1000)
        return {
            "tools": len(warm),
            "servers": len(registry.servers()),
            "cold_build_s": round(cold_s, 3),
            "cold_build_cpu_s": round(cold_cpu, 3),
            "warm_start_s": round(warm_s, 3),
            "warm_start_cpu_s": round(warm_cpu, 3),
            "warm_from_cache": stats.from_cache,
            "warm_analysed": stats.analysed,
            "p50_ms": round(statistics.median(latencies), 3),
            "p95_ms": round(percentile(latencies, 95), 3),
            "cold_peak_rss_added_mb": round(cold_peak / 1024, 1),
            "warm_peak_rss_added_mb": round(warm_peak / 1024, 1),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.one:
        print(json.dumps(measure(args.corpus, args.queries, args.one)))
        return 0
    results = []
    for size in args.sizes:
        command = [sys.executable, __file__, "--corpus", str(args.corpus)]
        command += ["--queries", str(args.queries), "--one", str(size)]
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
            f"{r['tools']:>6} tools ({r['servers']} servers): "
            f"cold build {r['cold_build_s']:.2f} s (cpu {r['cold_build_cpu_s']:.2f}), "
            f"warm start {r['warm_start_s']:.2f} s (cpu {r['warm_start_cpu_s']:.2f}) "
            f"({r['warm_from_cache']} servers from cache, {r['warm_analysed']} re-analysed), "
            f"query p50 {r['p50_ms']:.2f} ms / p95 {r['p95_ms']:.2f} ms, "
            f"peak RSS added {r['cold_peak_rss_added_mb']:.0f} MB cold / "
            f"{r['warm_peak_rss_added_mb']:.0f} MB warm"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
