"""Where bassi's log goes while the app owns the terminal.

The SDK and mcp log through Python logging (a dead CLI, a server's protocol error). Written to
the terminal, those lines would tear through the Textual screen; dropped, they would be lost
when someone needs them to report a bug. So the app sends them to ``.bassi/bassi.log``,
rotated so it never grows without bound, with the values ``.mcp.json`` took from the
environment masked (``bassi.core.secrets``).
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from bassi.core.secrets import MaskingFormatter

LOG_NAME = "bassi.log"


def log_to_file(state_dir: Path, level: int = logging.INFO) -> Path:
    """Route every logger to a rotating file under ``state_dir``; returns its path."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOG_NAME
    handler = RotatingFileHandler(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(MaskingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return path
