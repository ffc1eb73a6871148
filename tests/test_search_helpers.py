"""The app's index does its heavy work in helper processes at the least CPU weight (the Whoosh
documents written, the tool vectors computed), with exactly the results it would get doing the
work itself, and still does it itself when the helpers cannot run. Real processes, real model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bassi.core.helper_process import HelperProcess
from bassi.core.search import ToolIndex
from bassi.core.search.records import HELPER_MIN_DOCUMENTS
from bassi.core.search.tool_vectors import HELPER_MIN_TOOLS
from tests.conftest import HANG_SECONDS, descendant_pids
from tests.test_search import tool

SUBJECTS = ["invoice", "ticket", "calendar event", "spreadsheet row", "pull request"]
ACTIONS = ["Create", "Archive", "List", "Delete", "Export"]
TOOLS = [
    tool(
        "office",
        f"{action.lower()}_{subject.replace(' ', '_')}_{i}",
        f"{action} a {subject} in workspace number {i}",
        workspace="Which workspace",
    )
    for i in range(max(HELPER_MIN_DOCUMENTS, HELPER_MIN_TOOLS) // 25 + 1)
    for action in ACTIONS
    for subject in SUBJECTS
]


def nice_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[16])


def built(index: ToolIndex) -> ToolIndex:
    index.submit("office", TOOLS)
    assert index.wait_semantic(timeout=HANG_SECONDS)
    return index


def vectors_of(index: ToolIndex) -> Any:
    return index._vectors.get("office", index._servers["office"].digest)


def test_the_apps_index_works_in_lowered_helpers_with_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers: dict[str, int] = {}  # purpose -> the helper's nice while it answered
    request = HelperProcess.request

    def watched(self: HelperProcess, line: bytes, **kwargs: Any) -> bytes:
        answer = request(self, line, **kwargs)
        assert self._process is not None
        helpers[self.purpose] = nice_of(self._process.pid)
        return answer

    monkeypatch.setattr(HelperProcess, "request", watched)
    before = set(descendant_pids())

    index = built(ToolIndex(tmp_path / "index", helpers=True))

    assert helpers == {"the tool index writer": 19, "the tool encoder": 19}
    assert index.records.count() == len(TOOLS)
    found = index.find("name:archive* description:ticket server:office", limit=100).hits
    assert sorted(h.tool.name for h in found) == sorted(
        t.name for t in TOOLS if t.name.startswith("archive_ticket_")
    )
    here = built(ToolIndex(tmp_path / "here"))
    assert np.array_equal(vectors_of(index), vectors_of(here))
    assert index.search("raise a bill")[0].tool.name.startswith("create_invoice_")
    assert set(descendant_pids()) <= before  # the helpers rest once the work is done


def test_when_the_helpers_cannot_start_the_index_does_the_work_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("bassi.core.helper_process.sys.executable", "/nonexistent/python")

    index = built(ToolIndex(tmp_path / "index", helpers=True))

    assert index.records.count() == len(TOOLS)
    assert np.array_equal(vectors_of(index), vectors_of(built(ToolIndex(tmp_path / "here"))))
    assert "writing the tool index here instead" in caplog.text
    assert "encoding tools here instead" in caplog.text


def test_a_helper_that_dies_mid_work_leaves_nothing_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = HelperProcess.request
    killed: list[int] = []

    def dying(self: HelperProcess, line: bytes, **kwargs: Any) -> bytes:
        if self.purpose == "the tool encoder" and self.running and not killed:
            assert self._process is not None
            killed.append(self._process.pid)
            os.kill(self._process.pid, 9)
        return request(self, line, **kwargs)

    monkeypatch.setattr(HelperProcess, "request", dying)

    index = built(ToolIndex(tmp_path / "index", helpers=True))

    assert killed
    assert np.array_equal(vectors_of(index), vectors_of(built(ToolIndex(tmp_path / "here"))))
