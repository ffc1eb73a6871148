"""What bassi remembers about a project's servers between runs, in ``.bassi/servers.json``:
the servers the person disabled for good, and how each server's last start ended.

The last failure lets ``bassi mcp list`` answer at once about a server that is known to be
broken (the same entry as when it failed) instead of waiting for it to fail again. It grants
nothing, so it lives with the project's other harmless state; the entry is kept only as a
digest and the error as shown (secrets masked).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bassi.core.json_store import read_text, write_atomic

logger = logging.getLogger(__name__)

SERVERS_FILE = "servers.json"


@dataclass(frozen=True, slots=True)
class KnownFailure:
    error: str
    identity: str
    """A digest of the entry that failed (command, arguments, URL, environment); a changed
    entry is tried again. A digest, because the entry itself may hold secrets."""
    at: float


@dataclass
class ServerMemory:
    path: Path
    disabled: set[str] = field(default_factory=set)
    failures: dict[str, KnownFailure] = field(default_factory=dict)

    @classmethod
    def load(cls, state_dir: Path) -> ServerMemory:
        memory = cls(state_dir / SERVERS_FILE)
        try:
            data = json.loads(read_text(memory.path))  # a FIFO or device is never opened
        except (OSError, ValueError):
            return memory
        if not isinstance(data, dict):
            return memory
        disabled = data.get("disabled")
        if isinstance(disabled, list):
            memory.disabled = {d for d in disabled if isinstance(d, str)}
        failures = data.get("failures")
        if isinstance(failures, dict):
            for name, record in failures.items():
                if isinstance(record, dict) and isinstance(record.get("error"), str):
                    memory.failures[name] = KnownFailure(
                        record["error"],
                        str(record.get("identity", "")),
                        float(record.get("at") or 0),
                    )
        return memory

    def known_failure(self, name: str, identity: str) -> KnownFailure | None:
        failure = self.failures.get(name)
        return failure if failure is not None and failure.identity == identity else None

    def set_disabled(self, name: str, disabled: bool) -> None:
        if (name in self.disabled) == disabled:
            return
        if disabled:
            self.disabled.add(name)
        else:
            self.disabled.discard(name)
        self._save()

    def record(self, name: str, identity: str, error: str | None) -> None:
        """A start ended: failed with ``error``, or worked (None)."""
        if error is None:
            if self.failures.pop(name, None) is not None:
                self._save()
            return
        self.failures[name] = KnownFailure(error, identity, time.time())
        self._save()

    def _save(self) -> None:
        data: dict[str, Any] = {
            "disabled": sorted(self.disabled),
            "failures": {
                name: {"error": f.error, "identity": f.identity, "at": f.at}
                for name, f in sorted(self.failures.items())
            },
        }
        try:
            write_atomic(self.path, data)
        except OSError as exc:
            logger.warning("could not save %s: %s", self.path, exc)
