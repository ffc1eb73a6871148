"""Flags for tool descriptions that talk to the model instead of describing the tool.

A description goes to the model verbatim, so a server can use it to give orders ("ignore
your previous instructions", a fake ``<system-reminder>``, "do not tell the user"). bassi
cannot know what a server means, so it does not hide or rewrite such text: it marks it, on
the tool card, in the catalog and in the approval dialog, and a flagged tool is never
approved automatically.

The patterns are about the *form* of such text (commands to the model about its
instructions, chat or system markup, secrecy towards the user, invisible characters, paths
of credential files), not about any one server, so they carry to servers never seen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bassi.core.reveal import is_invisible, reveal
from bassi.core.safe_text import clean, one_line
from bassi.core.tools import ToolInfo

_EXCERPT_CHARS = 80
_CACHED_TOOLS = 20_000

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "tells the model to set its instructions aside",
        re.compile(
            r"\b(ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|of)\s+)*"
            r"(?:previous|prior|above|earlier|preceding|original|existing|system|safety|your|"
            r"all|any|other)\s+(?:\w+\s+){0,2}?"
            r"(instructions?|prompts?|rules|guidelines|directives?|guardrails)\b"
            r"|\b(new|updated|real|actual|hidden|secret)\s+(instructions?|system\s+prompt)\b"
            r"|\byou\s+are\s+now\b",
            re.IGNORECASE,
        ),
    ),
    (
        "imitates system or chat markup",
        re.compile(
            r"</?\s*(system|system[-_ ]?(reminder|prompt|message)|assistant|human|user|"
            r"instructions?|important|admin|developer|tool[-_ ]?use)\s*/?>"
            r"|<\|\s*(im_start|im_end|system|endoftext|assistant|user)\s*\|>"
            r"|\[/?(INST|SYS)\]|<<\s*/?SYS\s*>>"
            r"|^\s*(system|assistant|human)\s*:",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    (
        "asks to keep something from the user",
        re.compile(
            r"\b(do\s+not|don't|never)\s+(tell|inform|mention|reveal|disclose|notify|alert)\b"
            r"|\bwithout\s+(telling|informing|mentioning|notifying|alerting)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "mentions credential files",
        re.compile(
            r"(~|\$HOME|/home/[^/\s]+|/root)/\.(ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc)\b"
            r"|\bid_(rsa|ed25519|ecdsa)\b|\.aws/credentials\b|\bmcp\.json\b",
            re.IGNORECASE,
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Flag:
    what: str
    """What the text does, in a few words."""
    excerpt: str
    """Where, as a short, safe, visible excerpt."""

    def __str__(self) -> str:
        return f"{self.what}: “{self.excerpt}”"


_by_definition: dict[str, tuple[Flag, ...]] = {}


def tool_flags(tool: ToolInfo) -> tuple[Flag, ...]:
    """Flags for everything the model reads about ``tool``: its description, its title and
    the descriptions inside its input schema. Computed once per definition."""
    known = _by_definition.get(tool.definition_hash)
    if known is None:
        title = (tool.annotations or {}).get("title")
        schema = json.dumps(dict(tool.input_schema), ensure_ascii=False, default=str)
        known = flags("\n".join([tool.description, str(title or ""), schema]))
        if len(_by_definition) >= _CACHED_TOOLS:
            _by_definition.clear()
        _by_definition[tool.definition_hash] = known
    return known


def flags(text: str) -> tuple[Flag, ...]:
    """Every kind of model-directed text found in ``text``, once each, with an excerpt."""
    found = []
    for what, pattern in _PATTERNS:
        if match := pattern.search(text):
            found.append(Flag(what, _excerpt(text, match.start(), match.end())))
    if clean(text) != text.replace("\r\n", "\n"):
        at = next(i for i, c in enumerate(text) if c not in "\n\t" and is_invisible(c))
        found.append(Flag("contains terminal control characters", _excerpt(text, at, at + 1)))
    shown = clean(text)
    hidden = next((i for i, c in enumerate(shown) if c not in "\n\t" and is_invisible(c)), None)
    if hidden is not None:
        found.append(Flag("contains invisible characters", _excerpt(shown, hidden, hidden + 1)))
    return tuple(found)


def _excerpt(text: str, start: int, end: int) -> str:
    """Around ``start:end``, as it would be shown, with invisible characters written out."""
    before = max(0, start - 20)
    snippet = reveal(clean(text[before : max(end, start + 1) + 40]))
    return ("…" if before else "") + one_line(snippet, _EXCERPT_CHARS)
