"""Wall time of ``bassi tools search QUERY`` from a shell, with 16 servers configured.

The project's ``.mcp.json`` lists the benchmark corpus's 16 servers as real stdio servers
(``bench/corpus_server.py``). The first run connects them all and writes the cached catalog;
the next ``--runs`` answer from it (warm: nothing changed); ``--refresh`` runs connect every
server again, as every run did before the cache. From the repo root:

    .venv/bin/python bench/tools_cli_timing.py [--corpus ../shared/bench/corpus] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from corpus_server import (
    DEFAULT_CORPUS,
    approve_project,
    bench_env,
    corpus_servers,
    server_entry,
)


def write_project(project: Path, corpus: Path) -> int:
    servers = {}
    for data in corpus_servers(corpus):
        tools = project / f"{data['server']}.tools.json"
        tools.write_text(json.dumps(data["tools"]), encoding="utf-8")
        servers[str(data["server"])] = server_entry(tools)
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return len(servers)


def timed(project: Path, env: Mapping[str, str], *args: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one ``bassi tools`` run. On a busy
    shared machine the wall time mostly measures the neighbours; the CPU time does not."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bassi", "tools", *args],
        cwd=project,
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr[-2000:])
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--query", default="send an email to my team")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        env = bench_env(Path(scratch))
        servers = write_project(project, args.corpus)
        approve_project(project, env)
        first = timed(project, env, "search", args.query)
        warm = [timed(project, env, "search", args.query) for _ in range(args.runs)]
        refresh = [timed(project, env, "search", args.query, "--refresh") for _ in range(2)]
    result = {
        "servers": servers,
        "first_s": round(first[0], 2),
        "warm_median_s": round(statistics.median(w for w, _ in warm), 2),
        "warm_max_s": round(max(w for w, _ in warm), 2),
        "warm_median_cpu_s": round(statistics.median(c for _, c in warm), 2),
        "refresh_median_s": round(statistics.median(w for w, _ in refresh), 2),
        "refresh_median_cpu_s": round(statistics.median(c for _, c in refresh), 2),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"bassi tools search with {servers} servers: first run (connects, writes the cache) "
        f"{result['first_s']:.2f} s; warm (cached catalog) median {result['warm_median_s']:.2f} s"
        f" (cpu {result['warm_median_cpu_s']:.2f} s), max {result['warm_max_s']:.2f} s over "
        f"{args.runs} runs; --refresh (connects every server) median "
        f"{result['refresh_median_s']:.2f} s (cpu {result['refresh_median_cpu_s']:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
