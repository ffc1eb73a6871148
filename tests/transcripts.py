"""Write a Claude Code CLI transcript by hand, where the CLI keeps it for a project, so tests
of reading earlier conversations need no CLI run (and can hold what a run would not produce).

The lines are what the CLI writes: one JSON object per message, chained by ``parentUuid``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bassi.core.credentials import claude_config_dir
from bassi.core.settings import Settings

SESSION = "6f1c1c6e-3f0e-4a53-9d8a-0d2b4c1d9e11"


def transcript_path(settings: Settings, session_id: str = SESSION) -> Path:
    key = "".join(c if c.isalnum() else "-" for c in str(settings.project_dir))
    return claude_config_dir(settings.env) / "projects" / key / f"{session_id}.jsonl"


def transcript_lines(messages: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """One line per API message (``{"role": ..., "content": ...}``), chained in order."""
    lines, parent = [], None
    for message in messages:
        me = str(uuid.uuid4())
        line = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": message["role"],
            "uuid": me,
            "sessionId": SESSION,
            "message": dict(message),
            "timestamp": "2026-11-21T06:00:00.000Z",
        }
        lines.append(json.dumps(line).encode())
        parent = me
    return lines


def write_transcript(settings: Settings, lines: Sequence[bytes]) -> Path:
    path = transcript_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
