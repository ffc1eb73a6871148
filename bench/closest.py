"""How long ``Registry.closest`` ("did you mean ...?") takes on the worst names we can build,
at 5,000 and 10,000 tools: it runs on the UI's event loop for every unknown name, typed by
the user or sent by the model, so no name may hold the interface up.

Side by side: the bounded lookup (now) and the former one (difflib over every tool with the
whole name), in one run. The former takes minutes on long names, so it only runs on them
with ``--baseline-long``. From the repo root:

    .venv/bin/python bench/closest.py [--corpus ../shared/bench/corpus] [--sizes 5000 10000]
"""

from __future__ import annotations

import argparse
import difflib
import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path

from corpus_server import DEFAULT_CORPUS
from search_scale import replicated_registry

from bassi.core.registry import Registry
from bassi.core.tools import Origin, ToolInfo, split_qualified


def former_closest(registry: Registry, name: str, limit: int = 5) -> list[str]:
    """The lookup before it was bounded (bassi 9577500), for comparison."""
    parts = split_qualified(name)
    bare = parts[1] if parts else name.rpartition("/")[2]
    scored: dict[str, float] = {}
    for ref, tool in {t.ref: t for t in registry.tools()}.items():
        score = max(
            difflib.SequenceMatcher(None, name.lower(), ref.lower()).ratio(),
            difflib.SequenceMatcher(None, bare.lower(), tool.name.lower()).ratio(),
        )
        if score >= 0.5:
            scored[ref] = score
    return sorted(scored, key=lambda r: (-scored[r], r))[:limit]


def names(registry: Registry) -> dict[str, str]:
    """The hardest names we could think of, by kind."""
    rng = random.Random(7)
    tool = registry.tools()[len(registry.tools()) // 2]
    typo = tool.name[:2] + tool.name[3] + tool.name[2] + tool.name[4:]
    common = "_".join(w for t in registry.tools()[:200] for w in t.name.split("_"))
    return {
        "typo (short)": typo,
        "unknown server/tool": f"nosuch/{typo}",
        "1 kB of letters": "".join(rng.choices(string.ascii_lowercase, k=1_000)),
        "10 kB of letters": "".join(rng.choices(string.ascii_lowercase, k=10_000)),
        "10 kB of tool-name words": (common * 10)[:10_000],
        "qualified, 10,000-char tool": "mcp__" + tool.server + "__" + "x" * 10_000,
    }


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(first call, median of the next ``repeat``) in milliseconds of this thread's CPU time:
    what the event loop would be held for on an idle machine (on a busy one the wall clock
    adds waiting for a core)."""
    samples = []
    for _ in range(repeat + 1):
        began = time.thread_time()
        call()
        samples.append((time.thread_time() - began) * 1000)
    return samples[0], statistics.median(samples[1:]) if repeat else samples[0]


def with_long_tool_names(registry: Registry, count: int) -> Registry:
    """A hostile server announcing ``count`` tools with 10,000-character names."""
    registry.add_server("hostile", Origin.EXTERNAL)
    rng = random.Random(3)
    tools = [
        ToolInfo("hostile", "".join(rng.choices(string.ascii_lowercase + "_", k=10_000)))
        for _ in range(count)
    ]
    registry.set_tools("hostile", tools)
    return registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--baseline-long", action="store_true", help="also time the former lookup on 10 kB names"
    )
    args = parser.parse_args()
    print(f"{'tools':>6}  {'name':<30} {'now first':>10} {'now warm':>9} {'former':>10}")
    for size in args.sizes:
        for hostile in (False, True):
            began = time.thread_time()
            registry = replicated_registry(args.corpus, size)
            built = (time.thread_time() - began) * 1000
            print(f"{size:>6}  registry filled (tools parsed, trigrams made): {built:.0f} ms")
            label = str(size)
            if hostile:
                registry = with_long_tool_names(registry, 100)
                label = f"{size}+h"
            for kind, name in names(registry).items():
                first, warm = timed(lambda n=name, r=registry: r.closest(n), args.repeat)  # type: ignore[misc]
                if len(name) > 200 and not args.baseline_long:
                    former = "skipped"
                else:
                    ms, _ = timed(lambda n=name, r=registry: former_closest(r, n), 0)  # type: ignore[misc]
                    former = f"{ms:.1f} ms"
                print(
                    f"{label:>6}  {kind:<30} {first:>7.1f} ms {warm:>6.1f} ms {former:>10}",
                    flush=True,
                )
    print("CPU milliseconds of the calling thread.")
    print("now first: the first lookup (the trigrams are made as each server's tools are set);")
    print("now warm: median of the next lookups; +h: plus 100 tools with 10,000-char names")


if __name__ == "__main__":
    main()
