"""What a server says about a tool's behaviour: the MCP annotations, read once.

They are the server's own claims (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint`` and a ``title``), shown to people beside the tool so they can judge it. Only
one thing ever acts on them, and only when the user opts in: a tool that says it is read-only
and not destructive may run without asking (see ``bassi.core.policy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bassi.core.tools import ToolInfo


def _flag(annotations: Mapping[str, Any], key: str) -> bool | None:
    value = annotations.get(key)
    return value if isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class Hints:
    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def of(cls, tool: ToolInfo) -> Hints:
        annotations = tool.annotations or {}
        title = annotations.get("title")
        return cls(
            title=title if isinstance(title, str) and title.strip() else None,
            read_only=_flag(annotations, "readOnlyHint"),
            destructive=_flag(annotations, "destructiveHint"),
            idempotent=_flag(annotations, "idempotentHint"),
            open_world=_flag(annotations, "openWorldHint"),
        )

    @property
    def claims_read_only(self) -> bool:
        """Says it only reads: ``readOnlyHint`` true and ``destructiveHint`` not true."""
        return self.read_only is True and self.destructive is not True

    def labels(self) -> list[str]:
        """Short words for what the server declared; nothing for what it left out."""
        labels = []
        if self.read_only is not None:
            labels.append("read-only" if self.read_only else "changes things")
        if self.destructive is not None and not self.read_only:
            labels.append("destructive" if self.destructive else "not destructive")
        if self.idempotent:
            labels.append("idempotent")
        if self.open_world is not None:
            labels.append("open world" if self.open_world else "closed world")
        return labels
