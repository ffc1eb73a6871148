"""What bassi remembers per project between runs in ``<project>/.bassi/``: the input history.

Nothing here grants anything: a repository can ship ``.bassi/``. Pins and servers allowed
"always" live in the user's own directory (``bassi.core.grants``). Older versions of bassi
kept them in ``.bassi/state.json``; such entries are read only to tell the user once that
they are no longer honoured.

Files live in ``<project>/.bassi/``. Every write goes to a temporary file that is renamed over
the old one, so a crash mid-write never leaves half a file. A file that cannot be read is
renamed aside (``*.corrupt-<time>``) and bassi starts from empty state with a warning: losing a
preference is better than refusing to start, and the bad file stays for the user to inspect.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "state.json"
HISTORY_FILE = "history.json"
HISTORY_LIMIT = 1000


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_json(path: Path, expected: type, warnings: list[str]) -> Any:
    """The file's content, or None when missing; a corrupt file is set aside with a warning."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.append(f"could not read {path}: {exc.strerror}; starting without it")
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, expected):
            raise ValueError(f"expected a JSON {expected.__name__}")
    except ValueError as exc:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(path, aside)
            where = f"moved to {aside.name}"
        except OSError:
            where = "left in place"
        warnings.append(f"{path} was unreadable ({exc}); {where}, starting fresh")
        return None
    return data


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass
class ProjectState:
    directory: Path
    history: list[str] = field(default_factory=list)
    ignored_grants: list[str] = field(default_factory=list)
    """Pins and allowed servers found in an old ``state.json``: not honoured."""
    warnings: list[str] = field(default_factory=list)
    """Problems met while loading, for the UI to show once."""

    @classmethod
    def load(cls, directory: Path) -> ProjectState:
        warnings: list[str] = []
        state = read_json(directory / STATE_FILE, dict, warnings) or {}
        history = read_json(directory / HISTORY_FILE, list, warnings) or []
        return cls(
            directory=directory,
            history=_strings(history)[-HISTORY_LIMIT:],
            ignored_grants=[
                *_strings(state.get("pins")),
                *(f"every tool of '{s}'" for s in _strings(state.get("allowed_servers"))),
            ],
            warnings=warnings,
        )

    def add_history(self, line: str) -> None:
        """Remember an input line; an immediate repeat is stored once, like a shell does."""
        if not line.strip() or (self.history and self.history[-1] == line):
            return
        self.history.append(line)
        del self.history[:-HISTORY_LIMIT]
        write_json_atomic(self.directory / HISTORY_FILE, self.history)
