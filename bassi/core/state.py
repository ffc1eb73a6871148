"""What bassi remembers per project between runs in ``<project>/.bassi/``: the input history.

Nothing here grants anything: a repository can ship ``.bassi/``. Pins and servers allowed
"always" live in the user's own directory (``bassi.core.grants``). Older versions of bassi
kept them in ``.bassi/state.json``; such entries are read only to tell the user once that
they are no longer honoured.

Each file is a :class:`~bassi.core.json_store.JsonStore`: saved in the background, merged with
what another bassi in the same project wrote, never blocking the interface. A file that cannot
be read is moved aside (``*.corrupt-<time>``, keeping the readable entries of a cut-short
history) and bassi starts without it; a directory that cannot be written costs persistence,
with one warning, never the running app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bassi.core.json_store import JsonStore

STATE_FILE = "state.json"
HISTORY_FILE = "history.json"
HISTORY_LIMIT = 1000


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def _parse_history(data: Any) -> list[str]:
    if not isinstance(data, list):
        raise ValueError("expected a JSON list")
    return _strings(data)[-HISTORY_LIMIT:]


def _appended(line: str) -> Callable[[list[str]], list[str]]:
    def change(history: list[str]) -> list[str]:
        if not history or history[-1] != line:
            history.append(line)
        del history[:-HISTORY_LIMIT]
        return history

    return change


class ProjectState:
    """The project's remembered state. ``history`` is the live list (the input line walks it
    as it grows)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # Read, never written: what an older bassi granted here is only reported.
        self._old: JsonStore[dict[str, Any]] = JsonStore(
            directory / STATE_FILE, parse=_object, default=dict
        )
        self._history: JsonStore[list[str]] = JsonStore(
            directory / HISTORY_FILE, parse=_parse_history, default=list, salvage=True
        )
        old = self._old.value
        self.ignored_grants = [
            *_strings(old.get("pins")),
            *(f"every tool of '{s}'" for s in _strings(old.get("allowed_servers"))),
        ]
        """Pins and allowed servers found in an old ``state.json``: not honoured."""

    @classmethod
    def load(cls, directory: Path) -> ProjectState:
        return cls(directory)

    @property
    def history(self) -> list[str]:
        return self._history.value

    @property
    def warnings(self) -> list[str]:
        """Problems met so far (loading, saving), for the UI to show; each said once."""
        return list(dict.fromkeys([*self._old.warnings, *self._history.warnings]))

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Be told of a problem met later (a save that failed), possibly from another
        thread."""
        self._history.subscribe(listener)

    def add_history(self, line: str) -> None:
        """Remember an input line; an immediate repeat is stored once, like a shell does."""
        if not line.strip() or (self.history and self.history[-1] == line):
            return
        self._history.update(_appended(line))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait for pending saves (blocking). True when they finished in time."""
        return self._history.flush(timeout)
