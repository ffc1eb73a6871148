"""JSON files read without surprises (depth, NaN, FIFOs, duplicates) and written without losing
what another bassi process wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bassi.core.json_store import (
    MAX_DEPTH,
    DuplicateKey,
    JsonFileError,
    JsonStore,
    NonFinite,
    loads,
    read_text,
    salvage_list,
)

# --- reading -------------------------------------------------------------------------------


def test_nesting_beyond_the_limit_is_refused_naming_the_file_and_line() -> None:
    deep = '{\n"a": ' + "[" * 1000 + "]" * 1000 + "\n}"
    with pytest.raises(JsonFileError) as caught:
        loads(deep, "/p/.mcp.json")
    assert str(caught.value).startswith("/p/.mcp.json: nested more than")
    assert "line 2" in str(caught.value)
    # Far deeper than Python's recursion limit: still a clear message, never RecursionError.
    with pytest.raises(JsonFileError, match="nested more than"):
        loads('{"k": ' * 100_000, "f.json")
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH, "f.json") is not None


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"pattern": "[[[[" * 500, "quote": 'a "[" \\ b'})
    assert loads(text, "f.json")["pattern"] == "[[[[" * 500


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_nan_and_infinity_are_refused_naming_the_key(constant: str) -> None:
    text = '{"mcpServers": {"slow": {"timeout": ' + constant + "}}}"
    with pytest.raises(JsonFileError, match=r'"mcpServers\.slow\.timeout" is '):
        loads(text, "f.json")
    kept = loads(text, "f.json", keep_non_finite=True)["mcpServers"]["slow"]["timeout"]
    assert isinstance(kept, NonFinite)


def test_keys_written_twice_are_reported_with_both_lines() -> None:
    text = '{\n "mcpServers": {\n  "git": {"x": 1},\n  "web": {"git": 2},\n  "git": {"x": 3}\n }\n}'
    found: list[DuplicateKey] = []
    data = loads(text, "f.json", duplicates=found)
    assert data["mcpServers"]["git"] == {"x": 3}
    assert found == [DuplicateKey(("mcpServers",), "git", 3, 5)]


def test_invalid_json_and_huge_integers_are_clear_errors() -> None:
    with pytest.raises(JsonFileError, match="invalid JSON at line 1, column 8"):
        loads('{"a": 1', "f.json")
    with pytest.raises(JsonFileError, match="invalid JSON"):
        loads("9" * 10_000, "f.json")


def test_a_fifo_device_or_directory_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would wait forever
    with pytest.raises(JsonFileError, match="is a FIFO"):
        read_text(fifo)
    with pytest.raises(JsonFileError, match="is a character device"):
        read_text(Path("/dev/zero"))
    with pytest.raises(JsonFileError, match="is a directory"):
        read_text(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "missing.json")


def test_a_cut_short_list_keeps_its_complete_entries() -> None:
    assert salvage_list('[\n "a",\n {"b": [1, 2]},\n "c') == ["a", {"b": [1, 2]}]
    assert salvage_list('["a" "b"]') == ["a"]
    assert salvage_list("{}") == []
    assert salvage_list("") == []


# --- writing ---------------------------------------------------------------------------------


def grants(path: Path) -> JsonStore[dict[str, Any]]:
    """A store shaped like a grants file: lists and a scalar, saved as whole snapshots."""

    def parse(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        return data

    return JsonStore(path, parse=parse, default=dict)


def test_snapshots_saved_by_two_instances_merge(tmp_path: Path) -> None:
    path = tmp_path / "grants.json"
    seed = grants(path)
    seed.replace({"servers": ["old"], "trusted": "v1"})
    assert seed.flush()

    first, second = grants(path), grants(path)
    first.replace(first.value | {"servers": ["old", "git"]})
    second.replace({"servers": ["web"], "trusted": "v2"})  # "old" removed, "web" added
    assert first.flush() and second.flush()
    first.replace(first.value | {"servers": [*first.value["servers"], "mail"]})
    assert first.flush()

    assert json.loads(path.read_text()) == {"servers": ["git", "web", "mail"], "trusted": "v2"}
    assert grants(path).value == {"servers": ["git", "web", "mail"], "trusted": "v2"}


WRITER = """
import sys
from pathlib import Path
from bassi.core.json_store import JsonStore

def add(item):
    def change(items):
        items.append(item)
        return items
    return change

store = JsonStore(Path(sys.argv[1]), parse=list, default=list)
for n in range(int(sys.argv[3])):
    store.update(add(f"{sys.argv[2]}-{n}"))
    store.flush()
"""


def test_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER))
    writers = [
        subprocess.Popen([sys.executable, str(script), str(path), name, "40"])
        for name in ("a", "b", "c")
    ]
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    written = json.loads(path.read_text())
    assert sorted(written) == sorted(f"{name}-{n}" for name in "abc" for n in range(40))
    # Each process's entries are in its own order.
    assert [x for x in written if x.startswith("a-")] == [f"a-{n}" for n in range(40)]


def test_a_store_that_cannot_write_keeps_working_in_memory(tmp_path: Path) -> None:
    (tmp_path / "dir").write_text("a file")
    store = grants(tmp_path / "dir" / "grants.json")
    heard: list[str] = []
    store.subscribe(heard.append)
    store.replace({"servers": ["git"]})
    assert store.flush()
    store.replace({"servers": ["git", "web"]})
    assert store.flush()
    assert store.value == {"servers": ["git", "web"]} and store.in_memory
    assert len(heard) == 1 and "is not a directory" in heard[0]
