"""Where bassi's log goes while the app owns the terminal.

The SDK and mcp log through Python logging (a dead CLI, a server's protocol error). Written to
the terminal, those lines would tear through the Textual screen; dropped, they would be lost
when someone needs them to report a bug. So the app sends them to ``.bassi/bassi.log``,
rotated so it never grows without bound, with the values ``.mcp.json`` took from the
environment masked (``bassi.core.secrets``). A log that cannot be written (no directory, a
full disk) goes quiet: logging's own fallback prints a traceback to the terminal for every
line.
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from bassi.core.secrets import MaskingFormatter

LOG_NAME = "bassi.log"


class _QuietFileHandler(RotatingFileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        """A write failed (disk full): stop writing rather than print to the terminal."""
        self.setLevel(logging.CRITICAL + 1)


def log_to_file(state_dir: Path, level: int = logging.INFO) -> Path:
    """Route every logger to a rotating file under ``state_dir``; returns its path.

    Raises OSError when the file cannot be opened; logging then goes nowhere (never to the
    terminal) and the caller says so."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.setLevel(level)
    path = state_dir / LOG_NAME
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = _QuietFileHandler(
            path, maxBytes=1_000_000, backupCount=2, encoding="utf-8"
        )
    except OSError:
        root.addHandler(logging.NullHandler())
        raise
    handler.setFormatter(MaskingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path
