"""What checking a call's arguments against the tool's schema costs, on the largest schemas of
a corpus of real tool definitions (every ``*.json`` in DIR, each ``{"server": S, "tools":
[MCP tool objects]}``, as for ``bench/search_quality.py``).

For each of the ``--top`` largest input schemas it prints the compile time (metaschema check,
``$ref`` and pattern checks: paid once per definition, on a thread) and the per-call cost of
the check the proxy runs before forwarding (find the violations, write the refusal when
there are some: ``SchemaChecks.refusal`` without the result object), p50 / p95 over
``--calls`` calls, for three kinds of arguments:

- minimal: the required properties only, each with a value of its type (the check);
- full: every property down to four levels, each with a value of its type (the check; on
  these schemas that is a few hundred values, far more than a real call sends);
- invalid: every required property missing and one unknown property (the check and writing
  the refusal: message and parameter summary).

The baseline beside them, in the same run, is a JSON round trip of the full arguments
(``json.loads(json.dumps(...))``): what merely passing the arguments on costs at least.
The generated values follow each property's type (an enum's first choice), not its patterns
or formats, so some "valid" arguments still break a pattern: the violations column says how
many each set has (the check runs in full either way). The last line compiles every tool of
the corpus, as bassi does in the background when the servers connect.

    .venv/bin/python bench/validation_cost.py --corpus ../shared/bench/corpus [--top 8]
        [--calls 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bassi.core.tools import ToolInfo
from bassi.core.validation import SchemaChecks, compile_schema, refusal_message

SAMPLES = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None}


def load_tools(corpus: Path) -> list[ToolInfo]:
    tools = []
    for path in sorted(corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tools += [ToolInfo.from_mcp(data["server"], tool) for tool in data["tools"]]
    return tools


def sample(schema: Any, root: Mapping[str, Any], depth: int, everything: bool) -> Any:
    """A value of the schema's type: an object gets its required properties (``everything``:
    all of them), down to ``depth`` levels."""
    if not isinstance(schema, Mapping):
        return "x"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return sample(target, root, depth, everything)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample(schema[key][0], root, depth, everything)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "array":
        return [sample(schema.get("items"), root, depth - 1, everything)] if depth > 0 else []
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        wanted = set(schema.get("required") or ())
        names = [n for n in properties if everything or n in wanted] if depth > 0 else []
        return {n: sample(properties[n], root, depth - 1, everything) for n in names}
    return SAMPLES.get(str(kind), "x")


def percentiles(run: Callable[[], object], calls: int) -> tuple[float, float]:
    """p50 and p95 of ``run`` in microseconds."""
    run()
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        run()
        times.append((time.perf_counter_ns() - start) / 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def measure(tool: ToolInfo, calls: int) -> dict[str, Any]:
    schema = tool.input_schema
    compile_ms = min(_timed(lambda: compile_schema(schema)) for _ in range(3)) * 1000
    checks = SchemaChecks()
    compiled = checks.compiled(tool)
    assert compiled.problem is None, compiled.problem
    arguments = {
        "minimal": sample(schema, schema, 4, everything=False),
        "full": sample(schema, schema, 4, everything=True),
        "invalid": {"unknown_property": 1},
    }
    row: dict[str, Any] = {
        "tool": tool.ref,
        "schema_chars": len(json.dumps(dict(schema))),
        "compile_ms": round(compile_ms, 2),
    }

    def refuse(arguments: Any) -> str | None:
        """What the proxy does before forwarding: find the violations, write the refusal."""
        found = checks.violations(tool, arguments)
        return refusal_message(tool, found) if found else None

    for kind, args in arguments.items():
        run = (
            (lambda a=args: refuse(a))
            if kind == "invalid"
            else (lambda a=args: checks.violations(tool, a))
        )
        p50, p95 = percentiles(run, calls)
        row[kind] = {
            "p50_us": round(p50, 1),
            "p95_us": round(p95, 1),
            "argument_chars": len(json.dumps(args)),
            "violations": len(checks.violations(tool, args)),
        }
    full = arguments["full"]
    base = percentiles(lambda: json.loads(json.dumps(full)), calls)
    row["baseline_json_round_trip"] = {"p50_us": round(base[0], 1), "p95_us": round(base[1], 1)}
    return row


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--top", type=int, default=8, help="how many of the largest schemas")
    parser.add_argument("--calls", type=int, default=300, help="checks per measurement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tools = load_tools(args.corpus)
    compile_schema({"type": "object"})  # build the metaschema checkers once, as the app does
    largest = sorted(tools, key=lambda t: len(json.dumps(dict(t.input_schema))), reverse=True)
    rows = [measure(tool, args.calls) for tool in largest[: args.top]]
    start_cpu = time.process_time()
    every = _timed(lambda: [compile_schema(t.input_schema) for t in tools])
    compile_all = {
        "tools": len(tools),
        "wall_s": round(every, 2),
        "cpu_s": round(time.process_time() - start_cpu, 2),
    }
    if args.json:
        print(json.dumps({"schemas": rows, "compile_all": compile_all}, indent=2))
        return
    head = (
        f"{'tool':<36} {'chars':>6} {'compile':>8}  "
        f"{'minimal p50/p95':>22} {'full p50/p95':>26} {'invalid p50/p95':>22}  "
        f"{'json p50/p95':>14}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        cells = [
            f"{row[k]['p50_us']:.0f}/{row[k]['p95_us']:.0f} µs "
            f"[{row[k]['argument_chars']:,}c, {row[k]['violations']}v]"
            for k in ("minimal", "full", "invalid")
        ]
        base = row["baseline_json_round_trip"]
        print(
            f"{row['tool']:<36.36} {row['schema_chars']:>6,} {row['compile_ms']:>6.1f}ms  "
            f"{cells[0]:>22} {cells[1]:>26} {cells[2]:>22}  "
            f"{base['p50_us']:.0f}/{base['p95_us']:.0f} µs"
        )
    print(
        "[Nc, Mv] = the arguments' JSON characters and their violations. invalid includes "
        "writing the refusal; json = a JSON round trip of the full arguments."
    )
    print(
        f"compiling all {compile_all['tools']} tools: {compile_all['wall_s']} s wall, "
        f"{compile_all['cpu_s']} s CPU"
    )


if __name__ == "__main__":
    main()
