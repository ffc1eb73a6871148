"""The records bassi keeps in the user's own directory (``Settings.project_config_dir``).

Grants and project trust are read and written only through ``UserRecord``, so the way they
are stored changes in one place: a :class:`~bassi.core.json_store.JsonStore`, so two bassi
running for one project keep each other's grants (a save is merged with what is on disk, a
revoked grant stays revoked). A record that cannot be read is set aside with a warning and
reads as empty: for a grant that means "ask again", which is the safe way to fail. One that
cannot be written keeps working in memory, with a warning.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from bassi.core.json_store import JsonStore


def _object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


class UserRecord:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._store: JsonStore[dict[str, Any]] | None = None

    def load(self, warnings: list[str]) -> dict[str, Any]:
        """The record, or ``{}`` when it is missing or unreadable (said in ``warnings``)."""
        self._store = JsonStore(self.path, parse=_object, default=dict)
        warnings.extend(self._store.warnings)
        return copy.deepcopy(self._store.value)

    def save(self, data: dict[str, Any]) -> None:
        """Written before this returns: grants change rarely, and what was granted must be
        on disk before anything reads it again."""
        if self._store is None:
            self._store = JsonStore(self.path, parse=_object, default=dict)
        self._store.replace(data)
        self._store.flush()
