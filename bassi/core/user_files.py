"""The records bassi keeps in the user's own directory (``Settings.project_config_dir``).

Grants and project trust are read and written only through ``UserRecord``, so the way they
are stored changes in one place. A record that cannot be read is set aside with a warning
and reads as empty: for a grant that means "ask again", which is the safe way to fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bassi.core.state import read_json, write_json_atomic


class UserRecord:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, warnings: list[str]) -> dict[str, Any]:
        """The record, or ``{}`` when it is missing or unreadable (said in ``warnings``)."""
        data = read_json(self.path, dict, warnings)
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, Any]) -> None:
        write_json_atomic(self.path, data)
