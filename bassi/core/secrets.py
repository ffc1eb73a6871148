"""Keeping secrets off the screen, out of the log, and away from processes that need not see them.

Two kinds of secret pass through bassi:

- The agent's own credentials (``ANTHROPIC_API_KEY`` and its kin). Only the Claude Code CLI
  needs them. External servers and the commands the ``bash`` and ``task_automation`` tools
  run get bassi's environment without them; a command the model wrote, or a server a cloned
  repository names, must not be able to read the key. A user who wants a server to have one
  names it in that server's own ``env`` entry in ``.mcp.json``.
- Values ``.mcp.json`` took from the environment through ``${VAR}``: a token in a URL, an
  argument or a header. Wherever a server's command line, URL or failure is shown or logged,
  each such value is written back as ``${VAR}``, which hides it and still tells the user
  where it came from. A value shorter than ``MIN_MASKED_LENGTH`` characters stays visible:
  masking ``1`` or ``on`` would garble every message it occurs in, and a secret that short
  protects nothing anyway.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_AGENT_PREFIXES = ("ANTHROPIC_", "CLAUDE_")
_SECRET_WORDS = frozenset(
    {"KEY", "TOKEN", "SECRET", "CREDENTIAL", "CREDENTIALS", "PASSWORD", "PASSPHRASE", "HEADERS"}
)
MIN_MASKED_LENGTH = 4


def is_agent_credential(name: str) -> bool:
    """``ANTHROPIC_*`` and ``CLAUDE_*`` variables with a word such as KEY, TOKEN or SECRET in
    their name (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, ``CLAUDE_CODE_OAUTH_TOKEN``,
    ``ANTHROPIC_CUSTOM_HEADERS``, ...): a rule rather than a list, because the CLI keeps adding
    such variables and a list would silently miss the next one."""
    upper = name.upper()
    return upper.startswith(_AGENT_PREFIXES) and not _SECRET_WORDS.isdisjoint(upper.split("_"))


def without_agent_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` for a process that is not the agent: its credentials left out."""
    return {name: value for name, value in env.items() if not is_agent_credential(name)}


@dataclass(frozen=True, slots=True)
class ExpandedValues:
    """The values ``${VAR}`` expansion put into one server's configuration."""

    names: Mapping[str, str] = field(default_factory=dict)
    """Value -> the variable it came from (values shorter than ``MIN_MASKED_LENGTH`` are not
    kept)."""

    def mask(self, text: str) -> str:
        """``text`` with every expanded value written back as ``${NAME}``; the longest value
        first, so one that contains another is replaced whole."""
        return _mask(text, self.names)


def _mask(text: str, names: Mapping[str, str]) -> str:
    if not names or not text:
        return text
    ordered = sorted(names, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(value) for value in ordered))
    return pattern.sub(lambda match: "${" + names[match.group(0)] + "}", text)


_logged: dict[str, str] = {}


def mask_in_log(values: ExpandedValues) -> None:
    """Mask ``values`` in every line written through ``MaskingFormatter`` from now on. The log
    is the process's, so this registry is too."""
    for value, name in values.names.items():
        _logged.setdefault(value, name)


class MaskingFormatter(logging.Formatter):
    """Formats a record as usual, then masks the expanded values registered so far: in the
    message, its arguments and any traceback alike (an httpx line with a URL, an error that
    quotes a server's stderr)."""

    def format(self, record: logging.LogRecord) -> str:
        return _mask(super().format(record), _logged)
