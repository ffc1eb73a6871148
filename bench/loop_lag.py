"""Event-loop lag of the real app while 30 servers with 10,000 tools connect and are indexed.

Starts ``BassiApp`` headless (Textual's ``run_test``) over a project whose ``.mcp.json``
lists ``--servers`` stdio servers (``bench/corpus_server.py``, each serving its share of the
benchmark corpus replicated to ``--tools`` tools), and samples the loop: a task sleeps 5 ms
over and over and records how late it wakes. Lag is reported for two phases: while the
servers connect and the index takes them in (until ``Catalog.wait_ready``: every server
connected and searchable), and then while the tool vectors are computed or read from their
cache (up to ``--vector-window`` seconds). Each run starts cold (no ``.bassi``) and then warm
(the same project again), each in a fresh process. From the repo root:

    .venv/bin/python bench/loop_lag.py [--servers 30] [--tools 10000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from corpus_server import (
    DEFAULT_CORPUS,
    approve_project,
    bench_env,
    corpus_servers,
    server_entry,
)

SAMPLE_S = 0.005


def write_project(project: Path, corpus: Path, servers: int, tools: int) -> None:
    """``servers`` stdio servers sharing ``tools`` tools taken round-robin from the corpus."""
    every = [t for data in corpus_servers(corpus) for t in data["tools"]]
    per_server = -(-tools // servers)
    entries = {}
    made = 0
    for s in range(servers):
        count = min(per_server, tools - made)
        chosen = [
            {
                **every[(made + i) % len(every)],
                "name": f"t{made + i}_{every[(made + i) % len(every)]['name']}",
            }
            for i in range(count)
        ]
        made += count
        path = project / f"server{s:02}.json"
        path.write_text(json.dumps(chosen), encoding="utf-8")
        entries[f"bench{s:02}"] = server_entry(path, timeout=120)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")


def _lags(values: list[float]) -> dict[str, float]:
    if not values:
        return {"max_ms": 0.0, "p99_ms": 0.0, "p50_ms": 0.0, "samples": 0}
    ordered = sorted(values)
    return {
        "max_ms": round(ordered[-1] * 1000, 1),
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1000, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "samples": len(ordered),
    }


async def measure(project: Path, vector_window: float, catalog_only: bool) -> dict[str, Any]:
    from bassi.core.runtime import Runtime
    from bassi.core.settings import Settings
    from bassi.ui.app import BassiApp

    runtime = Runtime(Settings(project_dir=project, env=dict(os.environ)))  # see bench_env
    app = BassiApp(runtime)
    if catalog_only:
        await runtime.start()
        try:
            return await _sampled(runtime, vector_window)
        finally:
            await runtime.catalog.close()
    async with app.run_test(headless=True, size=(120, 40)):
        return await _sampled(runtime, vector_window)


async def _sampled(runtime: Any, vector_window: float) -> dict[str, Any]:
    """Sample the loop while the runtime's catalog connects and indexes, then while vectors
    arrive."""
    phase: list[float] = []
    loop_lags: dict[str, list[float]] = {"connect_and_index": phase, "vectors": []}
    stop = asyncio.Event()

    async def sample() -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            began = loop.time()
            await asyncio.sleep(SAMPLE_S)
            loop_lags["current"].append(max(0.0, loop.time() - began - SAMPLE_S))

    loop_lags["current"] = phase
    began = time.perf_counter()
    sampler = asyncio.create_task(sample())
    catalog = runtime.catalog
    while not catalog.registry.servers():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    ready = await catalog.wait_ready(600)
    connected_s = time.perf_counter() - began
    tools = len(catalog.index)
    loop_lags["current"] = loop_lags["vectors"]
    deadline = time.perf_counter() + vector_window
    while not catalog.index.semantic_ready and time.perf_counter() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    semantic = catalog.index.semantic_ready
    stop.set()
    await sampler
    return {
        "ready": ready,
        "tools": tools,
        "servers": len(catalog.registry.servers()),
        "connected_and_indexed_s": round(connected_s, 2),
        "semantic_ready": semantic,
        "connect_and_index": _lags(loop_lags["connect_and_index"]),
        "vectors": _lags(loop_lags["vectors"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--servers", type=int, default=30)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--vector-window", type=float, default=30.0)
    parser.add_argument(
        "--catalog-only", action="store_true", help="the runtime without the Textual app"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--project", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.project:
        result = asyncio.run(measure(args.project, args.vector_window, args.catalog_only))
        print(json.dumps(result))
        return 0
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        env = bench_env(Path(scratch))
        write_project(project, args.corpus, args.servers, args.tools)
        approve_project(project, env)
        for start in ("cold", "warm"):
            command = [sys.executable, __file__, "--project", str(project)]
            command += ["--vector-window", str(args.vector_window)]
            command += ["--catalog-only"] if args.catalog_only else []
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                print(done.stderr[-3000:], file=sys.stderr)
                return done.returncode
            results.append({"start": start, **json.loads(done.stdout.strip().splitlines()[-1])})
    if args.json:
        print(json.dumps(results))
        return 0
    what = "catalog only" if args.catalog_only else "app"
    for r in results:
        c, v = r["connect_and_index"], r["vectors"]
        print(
            f"{what} {r['start']}: {r['servers']} servers, {r['tools']} tools searchable after "
            f"{r['connected_and_indexed_s']:.1f} s; loop lag while connecting and indexing "
            f"max {c['max_ms']:.0f} ms / p99 {c['p99_ms']:.0f} ms / p50 {c['p50_ms']:.1f} ms; "
            f"then while vectors arrive (semantic-ready: {r['semantic_ready']}) "
            f"max {v['max_ms']:.0f} ms / p99 {v['p99_ms']:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
