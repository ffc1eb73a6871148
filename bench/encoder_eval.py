"""Does a real sentence encoder close the paraphrase gap, and what does it cost?

Measures ``bench/sentence_encoder.py`` (int8 all-MiniLM-L6-v2 made by
``bench/export_encoder.py``) on the benchmark corpus: (a) the encoder alone, for several ways
of writing a tool as text; (b) fused with ``ToolIndex``'s own ranking (its top 50 with
scores), by reciprocal-rank fusion and by a normalised score blend, weights chosen on the dev
queries and then reported on the held-out ones (the honest number); (c) query encode
latency on one thread, the whole fused search's latency, tool encoding throughput (to
estimate a cold build at 10,000 tools) and the RSS that loading the model adds.

Needs ``onnxruntime`` and ``tokenizers`` next to bassi's own dependencies, which the project
venv does not have: use a scratch venv and put the repo on the path. From the repo root:

    python3.11 -m venv /tmp/eval-venv
    /tmp/eval-venv/bin/pip install -e . onnxruntime tokenizers
    /tmp/eval-venv/bin/python bench/encoder_eval.py --model-dir DIR_FROM_export_encoder \
        [--corpus ../shared/bench/corpus] [--extra bench/queries_blind.jsonl] [--json]

``bench/queries_blind.jsonl`` is a third set of 60 requests in the benchmark's style, written
for this experiment after the lexical ranking was tuned and not used to tune anything: the
lexical scores on it show how far that tuning generalises.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from search_quality import load_queries, load_registry, percentile
from sentence_encoder import SentenceEncoder

from bassi.core.search import ToolIndex
from bassi.core.tools import ToolInfo

ROOT = Path(__file__).resolve().parent.parent
LEXICAL_DEPTH = 50
"""How many of the lexical ranking's tools take part in fusion (with their scores)."""
ENCODER_DEPTH = 50
"""How many of the encoder's nearest tools join them."""
EXACT = 1e6
"""``ToolIndex`` adds this to a tool whose exact name was typed: such a tool stays first."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
Floats = npt.NDArray[np.float32]
STOPWORDS = frozenset(
    line.strip()
    for line in (ROOT / "bassi/core/search/stopwords.txt").read_text("utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def words(identifier: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(identifier))


def sentences(text: str, count: int) -> str:
    parts = [p.strip() for p in _SENTENCE_END.split(text[:1_000]) if p.strip()]
    return " ".join(parts[:count])


def param_names(schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    return ", ".join(words(str(name)) for name in list(properties)[:30])


RECIPES: dict[str, Callable[[ToolInfo], str]] = {
    "name+1sent": lambda t: f"{words(t.name)}: {sentences(t.description, 1)}",
    "name+2sent": lambda t: f"{words(t.name)}: {sentences(t.description, 2)}",
    "name+2sent+params": lambda t: (
        f"{words(t.name)}: {sentences(t.description, 2)} Parameters: {param_names(t.input_schema)}"
    ),
    "server+name+2sent+params": lambda t: (
        f"{t.server} {words(t.name)}: {sentences(t.description, 2)} "
        f"Parameters: {param_names(t.input_schema)}"
    ),
}


@dataclass(frozen=True)
class Query:
    text: str
    expected: frozenset[str]
    lexical: list[tuple[int, float]]
    """``ToolIndex``'s top tools (positions in the corpus) with their scores."""
    cosine: Floats
    """Cosine of the query with every tool, for the recipe being measured."""
    coverage: list[float]
    """Per lexical hit, the share of the query's content words it matched."""
    positions_expected: frozenset[int]


def score(rankings: Sequence[Sequence[str]], queries: Sequence[Query]) -> dict[str, float]:
    return metrics(rankings, [q.expected for q in queries])


def metrics(
    rankings: Sequence[Sequence[str]], expected: Sequence[frozenset[str]]
) -> dict[str, float]:
    hits = {1: 0, 3: 0, 5: 0}
    reciprocal = 0.0
    for ranked, wanted in zip(rankings, expected, strict=True):
        rank = next((i for i, r in enumerate(ranked[:10], 1) if r in wanted), None)
        if rank is not None:
            reciprocal += 1 / rank
            for k in hits:
                hits[k] += rank <= k
    n = len(expected)
    return {
        "top1": round(hits[1] / n, 3),
        "top3": round(hits[3] / n, 3),
        "top5": round(hits[5] / n, 3),
        "mrr10": round(reciprocal / n, 3),
    }


def top1_changes(queries: Sequence[Query], order: Callable[[Query], list[int]]) -> dict[str, int]:
    """Queries whose top-1 fusion fixed or broke against the lexical ranking alone: a paired
    count says more than two hit rates on 60-110 queries."""
    fixed = broken = 0
    for q in queries:
        before = bool(q.lexical) and q.lexical[0][0] in q.positions_expected
        after = next(iter(order(q)), -1) in q.positions_expected
        fixed += after and not before
        broken += before and not after
    return {"fixed": fixed, "broken": broken}


def encoder_order(query: Query) -> list[int]:
    return np.argsort(-query.cosine, kind="stable")[:ENCODER_DEPTH].tolist()


def rrf(query: Query, weight: float, k: float) -> list[int]:
    """Reciprocal-rank fusion: 1/(k + lexical rank) + weight/(k + encoder rank)."""
    fused: dict[int, float] = {}
    for rank, (i, s) in enumerate(query.lexical, 1):
        fused[i] = 1 / (k + rank) + (EXACT if s >= EXACT else 0.0)
    for rank, i in enumerate(encoder_order(query), 1):
        fused[i] = fused.get(i, 0.0) + weight / (k + rank)
    return sorted(fused, key=lambda i: -fused[i])


def blend(query: Query, weight: float, floor: float, covered: bool = False) -> list[int]:
    """Lexical score over the best non-exact one, plus ``weight`` times the cosine above
    ``floor`` (cosines of unrelated texts sit around 0.1-0.2, not 0). With ``covered`` the
    lexical part is scaled by the share of the query's words the tool matched, so a tool that
    only shares a filler word ("take", "long") with the query cannot win on lexical alone."""
    ordinary = [s for _, s in query.lexical if s < EXACT]
    best = max(ordinary, default=0.0) or 1.0
    fused: dict[int, float] = {}
    for (i, s), share in zip(query.lexical, query.coverage, strict=True):
        lexical = (s if s < EXACT else best) / best
        fused[i] = (EXACT if s >= EXACT else 0.0) + lexical * (share if covered else 1.0)
    for i in {*fused, *encoder_order(query)}:
        fused[i] = fused.get(i, 0.0) + weight * max(float(query.cosine[i]) - floor, 0.0)
    return sorted(fused, key=lambda i: -fused[i])


def rankings(
    queries: Sequence[Query], tools: Sequence[ToolInfo], order: Callable[[Query], list[int]]
) -> list[list[str]]:
    return [[tools[i].ref for i in order(q)[:10]] for q in queries]


def build_queries(
    raw: Sequence[dict[str, Any]],
    index: ToolIndex,
    positions: Mapping[str, int],
    query_vectors: Floats,
    tool_vectors: Floats,
) -> list[Query]:
    out = []
    for row, vector in zip(raw, query_vectors, strict=True):
        hits = index.search(row["q"], limit=LEXICAL_DEPTH)
        out.append(
            Query(
                row["q"],
                frozenset(row.get("expected") or ()),
                [(positions[h.tool.ref], h.score) for h in hits],
                tool_vectors @ vector,
                [coverage(row["q"], h.matched_terms) for h in hits],
                frozenset(positions[r] for r in row.get("expected") or () if r in positions),
            )
        )
    return out


def coverage(query: str, matched: Sequence[str]) -> float:
    wanted = {w for w in re.findall(r"\w+", query.lower()) if w not in STOPWORDS}
    return min(1.0, len(set(matched)) / len(wanted)) if wanted else 1.0


def timed(fn: Callable[[], object], repeat: int, clock: Callable[[], float]) -> list[float]:
    """Milliseconds per call. ``time.thread_time`` (CPU of this thread, where onnxruntime runs
    with one intra-op thread) separates our cost from the neighbours on a shared machine."""
    out = []
    for _ in range(repeat):
        start = clock()
        fn()
        out.append((clock() - start) * 1000)
    return out


def rss_added(model_dir: Path) -> dict[str, float]:
    """In a fresh interpreter: RSS after importing bassi's search, then after loading the
    model and encoding one query (peak included)."""
    probe = (
        "import re, sys\n"
        "def mb(key):\n"
        "    text = open('/proc/self/status').read()\n"
        "    return int(re.search(key + r':\\s+(\\d+)', text).group(1)) / 1024\n"
        "import pathlib, numpy, bassi.core.search\n"
        "from sentence_encoder import SentenceEncoder\n"
        "before = mb('VmRSS')\n"
        "SentenceEncoder(pathlib.Path(sys.argv[1])).encode(['is my working copy clean'])\n"
        "print(before, mb('VmRSS'), mb('VmHWM'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(model_dir)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    before, after, peak = map(float, result.stdout.split())
    return {
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "added_mb": round(after - before, 1),
        "peak_added_mb": round(peak - before, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/bench/corpus")
    parser.add_argument("--dev", type=Path, default=ROOT.parent / "shared/bench/queries_dev.jsonl")
    parser.add_argument("--heldout", type=Path, default=ROOT / "bench/queries_heldout.jsonl")
    parser.add_argument(
        "--extra", type=Path, help="a further query set, reported like held-out (never tuned on)"
    )
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    registry = load_registry(args.corpus)
    index = ToolIndex()
    index.sync(registry)
    tools = [t for entry in registry.servers() for t in entry.tools]
    positions = {t.ref: i for i, t in enumerate(tools)}
    sets = {"dev": load_queries(args.dev), "heldout": load_queries(args.heldout)}
    if args.extra:
        sets["extra"] = load_queries(args.extra)
    encoder = SentenceEncoder(args.model_dir)
    query_vectors = {name: encoder.encode([q["q"] for q in raw]) for name, raw in sets.items()}
    report: dict[str, Any] = {"tools": len(tools), "queries": {k: len(v) for k, v in sets.items()}}

    lexical: dict[str, Any] = {}
    for name, raw in sets.items():
        ranked = [[h.tool.ref for h in index.search(q["q"], limit=10)] for q in raw]
        lexical[name] = metrics(ranked, [frozenset(q["expected"]) for q in raw])
    report["lexical"] = lexical

    report["encoder"] = {}
    report["throughput"] = {}
    per_recipe: dict[str, dict[str, list[Query]]] = {}
    for recipe, text_of in RECIPES.items():
        texts = [text_of(t) for t in tools]
        start, cpu = time.perf_counter(), time.thread_time()
        tool_vectors = encoder.encode(texts)
        seconds, cpu_seconds = time.perf_counter() - start, time.thread_time() - cpu
        report["throughput"][recipe] = {
            "tools_per_s": round(len(texts) / seconds, 1),
            "est_10k_tools_s": round(10_000 * seconds / len(texts), 1),
            "est_10k_tools_cpu_s": round(10_000 * cpu_seconds / len(texts), 1),
        }
        per_recipe[recipe] = {
            name: build_queries(raw, index, positions, query_vectors[name], tool_vectors)
            for name, raw in sets.items()
        }
        report["encoder"][recipe] = {
            name: score(rankings(qs, tools, encoder_order), qs)
            for name, qs in per_recipe[recipe].items()
        }

    methods: dict[str, Callable[[Query], list[int]]] = {}
    for weight in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0):
        for k in (5.0, 20.0, 60.0):
            methods[f"rrf w={weight} k={k:g}"] = lambda q, w=weight, k=k: rrf(q, w, k)
    for weight in (0.5, 1.0, 2.0, 3.0, 4.0, 6.0):
        for floor in (0.0, 0.2, 0.3):
            methods[f"blend w={weight} floor={floor}"] = lambda q, w=weight, f=floor: blend(q, w, f)
            methods[f"blend-cov w={weight} floor={floor}"] = lambda q, w=weight, f=floor: blend(
                q, w, f, covered=True
            )

    def objective(m: dict[str, float]) -> float:
        return m["top1"] + m["top3"] + m["mrr10"]

    fusion: dict[str, Any] = {}
    chosen = ("", "", -1.0)
    for recipe, qsets in per_recipe.items():
        results = {
            label: {name: score(rankings(qs, tools, fn), qs) for name, qs in qsets.items()}
            for label, fn in methods.items()
        }
        fusion[recipe] = {}
        for family in ("rrf ", "blend ", "blend-cov "):
            best = max(
                (m for m in results if m.startswith(family)),
                key=lambda m: objective(results[m]["dev"]),
            )
            fusion[recipe][best] = results[best]
            fusion[recipe][best]["top1_vs_lexical"] = {
                name: top1_changes(qs, methods[best]) for name, qs in qsets.items()
            }
            if objective(results[best]["dev"]) > chosen[2]:
                chosen = (recipe, best, objective(results[best]["dev"]))
    report["fusion_best_on_dev"] = fusion
    recipe, method, _ = chosen
    report["chosen"] = {"recipe": recipe, "method": method, **fusion[recipe][method]}

    probe = [q["q"] for raw in sets.values() for q in raw]
    encoder.encode(probe[:5])
    single = [
        t for q in probe for t in timed(lambda q=q: encoder.encode([q]), 3, time.perf_counter)
    ]
    single_cpu = [
        t for q in probe for t in timed(lambda q=q: encoder.encode([q]), 3, time.thread_time)
    ]
    tool_vectors = encoder.encode([RECIPES[recipe](t) for t in tools])

    def fused_search(q: str) -> list[int]:
        hits = index.search(q, limit=LEXICAL_DEPTH)
        vector = encoder.encode([q])[0]
        cosine = np.einsum("ij,j->i", tool_vectors, vector)
        query = Query(
            q,
            frozenset(),
            [(positions[h.tool.ref], h.score) for h in hits],
            cosine,
            [coverage(q, h.matched_terms) for h in hits],
            frozenset(),
        )
        return methods[method](query)

    whole = [t for q in probe for t in timed(lambda q=q: fused_search(q), 3, time.perf_counter)]
    lexical_only = [
        t for q in probe for t in timed(lambda q=q: index.search(q), 3, time.perf_counter)
    ]
    many = np.tile(tool_vectors, (10_000 // len(tools) + 1, 1))[:10_000]
    cosine_10k = timed(lambda: np.einsum("ij,j->i", many, tool_vectors[0]), 200, time.perf_counter)
    report["latency_ms"] = {
        "query_encode_p50": round(statistics.median(single), 2),
        "query_encode_p95": round(percentile(single, 95), 2),
        "query_encode_cpu_p50": round(statistics.median(single_cpu), 2),
        "query_encode_cpu_p95": round(percentile(single_cpu, 95), 2),
        "cosine_10k_tools_p50": round(statistics.median(cosine_10k), 2),
        "cosine_10k_tools_p95": round(percentile(cosine_10k, 95), 2),
        "lexical_search_p50": round(statistics.median(lexical_only), 2),
        "lexical_search_p95": round(percentile(lexical_only, 95), 2),
        "fused_search_p50": round(statistics.median(whole), 2),
        "fused_search_p95": round(percentile(whole, 95), 2),
    }
    report["model_bytes"] = {p.name: p.stat().st_size for p in sorted(args.model_dir.iterdir())}
    report["rss"] = rss_added(args.model_dir)

    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{len(tools)} tools; chosen on dev: {recipe}, {method}")
    print(f"{'':46}" + "".join(f"{name:>26}" for name in sets))
    rows = [("lexical (ToolIndex)", lexical)]
    rows += [(f"encoder {r}", v) for r, v in report["encoder"].items()]
    rows += [(f"fused {r} {m}", v) for r, ms in fusion.items() for m, v in ms.items()]
    for label, values in rows:
        cells = "".join(
            f"{v['top1']:>10.3f}{v['top3']:>8.3f}{v['mrr10']:>8.3f}"
            for v in (values[name] for name in sets)
        )
        print(f"{label:46}{cells}")
    print("(each set: top-1, top-3, MRR@10)")
    print(json.dumps({k: report[k] for k in ("latency_ms", "throughput", "model_bytes", "rss")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
