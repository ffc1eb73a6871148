"""The sentence encoder in search: requests that share no word with their tool still find it,
tool vectors arrive in the background and are cached per server, and the cache is only ever
a cache. Real model throughout (one shared encoder, loaded once)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bassi.core.search import ToolIndex, fusion
from bassi.core.search.documents import encoder_text
from bassi.core.search.encoder import DIMENSIONS, SentenceEncoder, Vectors, default_encoder
from bassi.core.search.half_rows import CHUNK_ROWS, HalfRows
from bassi.core.tools import ToolInfo
from tests.conftest import HANG_SECONDS
from tests.test_search import registry_of, tool

UMBRELLA = "will I need an umbrella tomorrow"
"""Shares no word (nor synonym) with the forecast tool: only meaning connects them."""


WEATHER = [
    tool("weather", "get_forecast", "Weather forecast for a city", city="City name"),
    tool("weather", "get_alerts", "Active severe weather alerts for a US state", state="State"),
]
KIT = [
    tool("kit", "list-mail-messages", "List the messages in the signed-in user's mailbox"),
    tool("kit", "git_status", "Shows the working tree status"),
    tool("kit", "create-calendar-event", "Create an event in the user's calendar"),
    tool("kit", "read_file", "Read the complete contents of a file", path="Path"),
]


def refs(index: ToolIndex, query: str) -> list[str]:
    return [h.tool.ref for h in index.search(query)]


def ready(cache: Path | None = None, **servers: Sequence[ToolInfo]) -> ToolIndex:
    index = ToolIndex(cache)
    for name, tools in servers.items():
        index.update_server(name, tools)
    assert index.wait_semantic(timeout=60)
    return index


def test_a_paraphrase_with_no_shared_word_is_found_through_the_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = ready(weather=WEATHER, kit=KIT)
    assert refs(index, UMBRELLA)[0] == "weather/get_forecast"
    monkeypatch.setattr(fusion, "MEANING_WEIGHT", 0.0)
    assert "weather/get_forecast" not in refs(index, UMBRELLA)


def test_nonsense_still_finds_nothing_with_the_encoder() -> None:
    index = ready(weather=WEATHER, kit=KIT)
    assert refs(index, "qwzx vbnm") == []
    assert refs(index, "get_forecast")[0] == "weather/get_forecast"


def test_float16_tool_vectors_give_exactly_the_float32_cosines() -> None:
    """Every finite float16 value (subnormals and signed zeros included), in servers of
    several sizes, one spanning chunks and one still waiting for its vectors, against the
    plain float32 product: holding the vectors as float16 must not move a ranking."""
    halves = np.arange(2**16, dtype=np.uint16).view(np.float16)
    rng = np.random.default_rng(7)
    rows = rng.permutation(
        np.resize(halves[np.isfinite(halves)], (2 * CHUNK_ROWS + 300) * DIMENSIONS)
    )
    small, large, rest = np.split(rows.reshape(-1, DIMENSIONS), [3, CHUNK_ROWS + 600])
    waiting = 7
    blocks = [(0, small), (3 + waiting, large), (3 + waiting + len(large), rest)]
    total = waiting + len(rows) // DIMENSIONS
    dense = np.zeros((total, DIMENSIONS), dtype=np.float32)
    for row, block in blocks:
        dense[row : row + len(block)] = block.astype(np.float32)
    query = rng.standard_normal(DIMENSIONS).astype(np.float32)

    cosines = HalfRows(blocks, total).dot(query)

    assert np.array_equal(cosines, np.einsum("ij,j->i", dense, query))
    assert not cosines[3 : 3 + waiting].any()


class GatedEncoder(SentenceEncoder):
    """The real model, but the background worker waits until the test opens the gate: "not
    ready yet" without depending on how fast the machine is."""

    def __init__(self) -> None:
        super().__init__(default_encoder().model_dir)
        self.gate = threading.Event()

    def encode(self, texts: Sequence[str]) -> Vectors:
        if threading.current_thread() is not threading.main_thread():
            assert self.gate.wait(timeout=60)
        return super().encode(texts)


def test_words_work_before_vectors_are_ready_and_meaning_joins_after() -> None:
    encoder = GatedEncoder()
    encoder.load()
    index = ToolIndex(encoder=encoder)
    index.update_server("weather", WEATHER)
    index.update_server("kit", KIT)
    assert not index.semantic_ready
    assert refs(index, "weather forecast")[0] == "weather/get_forecast"
    assert refs(index, UMBRELLA) == []
    encoder.gate.set()
    assert index.wait_semantic(timeout=60)
    assert index.semantic_ready
    assert refs(index, UMBRELLA)[0] == "weather/get_forecast"


def test_vectors_are_cached_per_server_and_recomputed_only_for_what_changed(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "index"
    first = ready(cache, weather=WEATHER, kit=KIT)
    assert (first.stats.vectors_computed, first.stats.vectors_from_cache) == (2, 0)

    warm = ready(cache, weather=WEATHER, kit=KIT)
    assert (warm.stats.vectors_computed, warm.stats.vectors_from_cache) == (0, 2)
    assert refs(warm, UMBRELLA)[0] == "weather/get_forecast"

    files = sorted(p.name for p in (tmp_path / "index-vectors").glob("*.npy"))
    changed = [*KIT, tool("kit", "send-mail", "Send an email message", to="Recipient")]
    third = ready(cache, weather=WEATHER, kit=changed)
    assert (third.stats.vectors_computed, third.stats.vectors_from_cache) == (1, 1)
    now = sorted(p.name for p in (tmp_path / "index-vectors").glob("*.npy"))
    assert len(now) == 2 and len(set(now) & set(files)) == 1  # kit's old file replaced

    third.sync(registry_of({"weather": WEATHER}))
    assert len(list((tmp_path / "index-vectors").glob("*.npy"))) == 1
    assert refs(third, UMBRELLA)[0] == "weather/get_forecast"


def test_vectors_cached_by_one_run_are_reused_by_the_next(tmp_path: Path) -> None:
    """Another process (another string-hash seed) wrote the cache: the app's restart."""
    script = (
        "import sys; from pathlib import Path\n"
        "from tests.test_search_semantic import KIT, WEATHER, ready\n"
        "ready(Path(sys.argv[1]), weather=WEATHER, kit=KIT)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "index")],
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        timeout=60,
    )
    warm = ready(tmp_path / "index", weather=WEATHER, kit=KIT)
    assert (warm.stats.vectors_computed, warm.stats.vectors_from_cache) == (0, 2)


def test_a_corrupt_vector_cache_is_recomputed_not_fatal(tmp_path: Path) -> None:
    cache = tmp_path / "index"
    ready(cache, weather=WEATHER, kit=KIT)
    vectors = list((tmp_path / "index-vectors").glob("*.npy"))
    assert len(vectors) == 2
    vectors[0].write_bytes(b"\x93NUMPY garbage\xff" * 3)
    vectors[1].write_bytes(vectors[1].read_bytes()[:200])
    again = ready(cache, weather=WEATHER, kit=KIT)
    assert (again.stats.vectors_computed, again.stats.vectors_from_cache) == (2, 0)
    assert refs(again, UMBRELLA)[0] == "weather/get_forecast"
    assert ready(cache, weather=WEATHER, kit=KIT).stats.vectors_from_cache == 2


def test_huge_and_hostile_descriptions_are_capped_before_encoding() -> None:
    filler = "\x1b[31m[bold]lorem ipsum[/bold] dolor sit amet " * 40_000
    huge = tool("bloat", "huge", filler, **{f"p{i}": filler for i in range(200)})
    text = encoder_text(huge)
    assert len(text) < 2_500
    start = time.perf_counter()
    index = ready(bloat=[huge, *WEATHER])
    assert time.perf_counter() - start < HANG_SECONDS
    assert refs(index, UMBRELLA)[0] == "weather/get_forecast"


def test_the_shipped_model_matches_its_checksums_and_carries_its_licence() -> None:
    """The model ships in the package (never downloaded): exactly the files that were
    exported, with the licence they came under."""
    import hashlib

    models = default_encoder().model_dir
    sums = (models / "SHA256SUMS").read_text(encoding="utf-8").split("\n")
    listed = dict(reversed(line.split()) for line in sums if line.strip())
    assert set(listed) == {"mpnet-w8.onnx", "tokenizer.json"}
    for name, digest in listed.items():
        assert hashlib.sha256((models / name).read_bytes()).hexdigest() == digest, name
    licence = (models / "LICENSE").read_text(encoding="utf-8")
    assert "all-mpnet-base-v2" in licence and "Apache License" in licence
