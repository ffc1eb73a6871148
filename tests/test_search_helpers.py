"""Helper processes work at the least CPU weight, their sessions lowered however busy the
kernel's turns are; the app's index does its heavy work in them (the Whoosh documents written,
the tool vectors computed), with exactly the results it would get doing the work itself, and
still does it itself when the helpers cannot run. Real processes, real model."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bassi.core.cpu_priority import BACKGROUND_NICE, session_nice, set_session_nice
from bassi.core.helper_process import HelperProcess
from bassi.core.schema_worker import SchemaWorker
from bassi.core.search import ToolIndex
from bassi.core.search.encoder import SentenceEncoder, default_encoder
from bassi.core.search.records import HELPER_MIN_DOCUMENTS
from bassi.core.search.tool_vectors import HELPER_MIN_TOOLS
from tests.conftest import HANG_SECONDS, descendant_pids
from tests.terminal import wait_until
from tests.test_discovery import can_lower_sessions, session_of_its_own
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


def test_a_helper_starts_in_a_lowered_session_though_the_kernel_just_took_another_change() -> None:
    """Without CAP_SYS_ADMIN Linux takes one change of a session's weight per tenth of a
    second: a helper lowering itself once, right after another change (a server's), stayed at
    the normal weight and weighed as much as all of bassi."""
    if not asyncio.run(can_lower_sessions()):
        pytest.skip("this system does not let sessions be lowered")
    checker = SchemaWorker()
    try:
        with session_of_its_own() as other:
            set_session_nice(other, BACKGROUND_NICE)  # the kernel's turn goes to this one
            assert checker.problems({"a": {"type": "object"}}) == {"a": None}
        assert checker._process is not None
        assert session_nice(checker._process.pid) == BACKGROUND_NICE
        assert nice_of(checker._process.pid) == BACKGROUND_NICE
    finally:
        checker.close()


def test_the_apps_index_works_in_lowered_helpers_with_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers: dict[str, tuple[int, int | None]] = {}  # purpose -> its nice and its session's
    request = HelperProcess.request

    def watched(self: HelperProcess, line: bytes, **kwargs: Any) -> bytes:
        answer = request(self, line, **kwargs)
        assert self._process is not None
        helpers[self.purpose] = (nice_of(self._process.pid), session_nice(self._process.pid))
        return answer

    monkeypatch.setattr(HelperProcess, "request", watched)
    before = set(descendant_pids())

    index = built(ToolIndex(tmp_path / "index", helpers=True))

    assert set(helpers) == {"the tool index writer", "the tool encoder"}
    assert all(nice == BACKGROUND_NICE for nice, _ in helpers.values())
    if asyncio.run(can_lower_sessions()):
        assert all(session == BACKGROUND_NICE for _, session in helpers.values())
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


def test_a_few_tools_go_to_the_helper_until_the_apps_model_is_wanted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bassi's own servers have a handful of tools. Encoding them in the app loaded its model
    while thirty servers started, which stalled the screen (``bench/loop_lag.py``): the helper
    loads its own instead. Once searches want the app's model, a few tools are encoded with
    it rather than by a helper started for them."""
    encoded_by_helper: list[bytes] = []
    request = HelperProcess.request

    def watched(self: HelperProcess, line: bytes, **kwargs: Any) -> bytes:
        if self.purpose == "the tool encoder":
            encoded_by_helper.append(line)
        return request(self, line, **kwargs)

    monkeypatch.setattr(HelperProcess, "request", watched)
    few = TOOLS[:3]
    assert len(few) < HELPER_MIN_TOOLS
    encoder = SentenceEncoder(default_encoder().model_dir)
    index = ToolIndex(tmp_path / "index", encoder=encoder, helpers=True)

    index.submit("office", few)
    assert index.wait_indexed(timeout=HANG_SECONDS)
    wait_until(lambda: vectors_of(index) is not None)
    assert encoded_by_helper and not encoder.loaded
    here = ToolIndex(tmp_path / "here")
    here.submit("office", few)
    assert here.wait_semantic(timeout=HANG_SECONDS)
    assert np.array_equal(vectors_of(index), vectors_of(here))

    index.prepare_queries()
    wait_until(lambda: encoder.loaded)
    asked = len(encoded_by_helper)
    index.submit("desk", TOOLS[3:6])
    assert index.wait_semantic(timeout=HANG_SECONDS)
    assert len(encoded_by_helper) == asked
