"""Library log lines land in .bassi/bassi.log, not on the terminal the app draws on."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pytest

from bassi.core.catalog import Catalog
from bassi.core.log_file import log_to_file
from bassi.core.settings import Settings
from tests.discovery_fixtures import write_config


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


@pytest.mark.usefixtures("restore_logging")
def test_values_the_config_took_from_the_environment_are_masked_in_the_log(
    tmp_path: Path,
) -> None:
    """A library that logs a server's URL (httpx logs every request) must not write the token
    the URL took from ``${VAR}`` into the log file."""
    secret = "tok-41c7d2be9a"
    write_config(tmp_path, {"remote": {"type": "http", "url": "https://mcp.example/?k=${KEY}"}})
    Catalog(Settings(project_dir=tmp_path, env={"KEY": secret}))
    path = log_to_file(tmp_path / ".bassi")
    logging.getLogger("httpx").warning("HTTP Request: POST https://mcp.example/?k=%s", secret)
    try:
        raise ConnectionError(f"cannot reach https://mcp.example/?k={secret}")
    except ConnectionError:
        logging.getLogger("bassi.core.runtime").exception("could not re-list server remote")
    for handler in logging.getLogger().handlers:
        handler.flush()

    logged = path.read_text()
    assert "HTTP Request: POST https://mcp.example/?k=${KEY}" in logged
    assert "ConnectionError: cannot reach https://mcp.example/?k=${KEY}" in logged
    assert secret not in logged


@pytest.mark.usefixtures("restore_logging")
def test_a_log_that_cannot_be_written_stays_off_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".bassi").write_text("a file where the directory should be")
    with pytest.raises(OSError):
        log_to_file(tmp_path / ".bassi")
    logging.getLogger("mcp").error("server said something")

    log_to_file(tmp_path / "state")
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.FileHandler)
    kept, handler.stream = handler.stream, open("/dev/full", "w")  # noqa: SIM115
    try:
        logging.getLogger("mcp").error("another line: the disk is full")
        logging.getLogger("mcp").error("and another")
    finally:
        full, handler.stream = handler.stream, kept
        with contextlib.suppress(OSError):
            full.close()

    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
