"""What the tool definitions cost the model in context, in ``all`` and ``progressive`` mode.

Loads a corpus of real tool definitions (every ``*.json`` in DIR, each ``{"server": S,
"tools": [MCP tool objects]}``, as for ``bench/search_quality.py``) as in-process servers,
starts the real bundled Claude Code CLI through bassi's Runtime against the scripted model of
the test suite, sends one message, and measures the ``tools`` array of the FIRST request the
model receives: characters of its JSON (compact, as sent) and estimated tokens (characters /
4). Nothing is computed from the registry: the figures are what the CLI really sent.

    .venv/bin/python bench/context_cost.py --corpus ../shared/bench/corpus [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from corpus_server import corpus_server
from mcp import types
from mcp.server import Server

from bassi.core.exposure import estimate_tokens
from bassi.core.runtime import Runtime
from bassi.core.settings import Settings, ToolsMode

REPO = Path(__file__).resolve().parent.parent


def _scripted_model_module() -> ModuleType:
    """``tests/scripted_model.py``, imported by path: the bench is not part of the tests."""
    path = REPO / "tests" / "scripted_model.py"
    spec = importlib.util.spec_from_file_location("bassi_bench_scripted_model", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the scripted model from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_corpus(corpus: Path) -> dict[str, Callable[[Path], Server[Any]]]:
    servers = {}
    for path in sorted(corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = [types.Tool.model_validate(t) for t in data["tools"]]
        servers[str(data["server"])] = corpus_server(str(data["server"]), tools)
    if not servers:
        raise SystemExit(f"no *.json tool definitions in {corpus}")
    return servers


async def first_request_tools(
    corpus: dict[str, Callable[[Path], Server[Any]]], mode: ToolsMode, scripted: ModuleType
) -> list[dict[str, Any]]:
    with (
        tempfile.TemporaryDirectory(prefix="bassi-context-cost-") as tmp,
        scripted.ScriptedModel() as model,
    ):
        model.script(scripted.text("ok"))
        project = Path(tmp) / "project"
        project.mkdir()
        home = Path(tmp) / "home"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))},
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "bench-dummy-key",
            "ANTHROPIC_SMALL_FAST_MODEL": scripted.AUX_MODEL,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }
        runtime = Runtime(Settings(project_dir=project, env=env, tools_mode=mode), shipped=corpus)
        try:
            await runtime.start()
            await runtime.catalog.wait_ready()
            async for _event in runtime.send("hello"):
                pass
        finally:
            await runtime.close()
        turns = model.turn_requests
        if not turns:
            raise SystemExit(f"{mode}: the CLI sent no request to the scripted model")
        tools: list[dict[str, Any]] = turns[0].tools
        return tools


def measure(tools: list[dict[str, Any]]) -> dict[str, int]:
    chars = len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
    return {"chars": chars, "tokens": estimate_tokens(chars)}


async def run(corpus_dir: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The figures, and the tool names each mode sent (for the human-readable report)."""
    corpus = load_corpus(corpus_dir)
    scripted = _scripted_model_module()
    figures: dict[str, Any] = {}
    names: dict[str, list[str]] = {}
    for mode in (ToolsMode.ALL, ToolsMode.PROGRESSIVE):
        tools = await first_request_tools(corpus, mode, scripted)
        figures[mode.value] = measure(tools)
        names[mode.value] = [str(t.get("name")) for t in tools]
    all_chars = figures["all"]["chars"]
    figures["reduction_pct"] = round(100 * (1 - figures["progressive"]["chars"] / all_chars), 2)
    return figures, names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, metavar="DIR")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    figures, names = asyncio.run(run(args.corpus))
    if args.json:
        print(json.dumps(figures))
        return 0
    print("tools array of the first model request (tokens estimated as characters / 4)")
    for mode in ("all", "progressive"):
        f, count = figures[mode], len(names[mode])
        print(f"  {mode:<12} {count:>4} tools {f['chars']:>10,} chars {f['tokens']:>9,} tokens")
    share = 100 - figures["reduction_pct"]
    print(f"  reduction    {figures['reduction_pct']:.2f}% (progressive is {share:.2f}% of all)")
    print(f"  progressive sends: {', '.join(names['progressive'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
