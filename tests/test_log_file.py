"""Library log lines land in .bassi/bassi.log, not on the terminal the app draws on."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bassi.core.log_file import log_to_file


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


@pytest.mark.usefixtures("restore_logging")
def test_errors_from_libraries_go_to_the_project_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = log_to_file(tmp_path / ".bassi")
    logging.getLogger("claude_agent_sdk").error("CLI process exited with code 1")
    for handler in logging.getLogger().handlers:
        handler.flush()

    assert path == tmp_path / ".bassi" / "bassi.log"
    assert "ERROR claude_agent_sdk: CLI process exited with code 1" in path.read_text()
    captured = capsys.readouterr()
    assert "CLI process exited" not in captured.err + captured.out
