"""Text shown so that people see every character in it: nothing invisible, nothing hidden.

Names of tools and servers and the arguments of a call come from servers and from the model.
A name can carry a zero-width character to look like another one (``exec\u200bute``), and an
argument can hide its payload behind a few hundred spaces or a run of blank lines. Whatever
is shown for a person to decide on goes through here first.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

_SHOWN_AS_IS = frozenset({" ", "\n"})
_HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")

SPACE_RUN = 12
"""A run of at least this many spaces is shown by its length, not as blank room."""
LINE_BREAK_RUN = 3
"""A run of at least this many line breaks is shown by its length."""

_SPACES = re.compile(rf" {{{SPACE_RUN},}}")
_BREAKS = re.compile(rf"\n{{{LINE_BREAK_RUN},}}")
_MARKS = {"\n": "↵", "\t": "⇥", "\r": "␍"}
INDENT = "  "


def is_invisible(char: str) -> bool:
    """Characters a reader cannot see or tell apart from a plain space: controls, format
    characters (zero-width, bidi, tags), private use, unassigned, and every space or
    separator other than the plain one."""
    if char in _SHOWN_AS_IS:
        return False
    return unicodedata.category(char)[0] in ("C", "Z") or char in _HANGUL_FILLERS


def _code(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


def reveal(text: str) -> str:
    """``text`` with every invisible character written out as ``⟨U+200B⟩``, so a look-alike
    name (``exec\\u200bute``) is told apart from the real one wherever it is shown."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_code(c) if is_invisible(c) else c for c in text)


def reveal_string(text: str) -> str:
    """A string value as a person should judge it: quoted; line breaks, tabs and carriage
    returns marked (``↵`` ``⇥`` ``␍``) and each line break kept, so code stays readable;
    other invisible characters written out; long runs of spaces or line breaks given by
    their length, so nothing hides behind blank room."""
    text = _BREAKS.sub(lambda m: f"\n⟨{len(m.group())} line breaks⟩\n", text)
    text = _SPACES.sub(lambda m: f"⟨{len(m.group())} spaces⟩", text)
    out = []
    for char in text:
        if char == "\n":
            out.append("↵\n")
        elif char in _MARKS:
            out.append(_MARKS[char])
        elif char in '"\\':
            out.append("\\" + char)
        elif is_invisible(char):
            out.append(_code(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def reveal_value(value: Any, depth: int = 0) -> str:
    """A JSON value, whole, laid out one member per line, its strings as ``reveal_string``
    shows them. Nothing is cut: what is shown is everything the tool would get."""
    pad = INDENT * (depth + 1)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        members = [
            f"{pad}{reveal_string(str(k))}: {reveal_value(v, depth + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(members) + "\n" + INDENT * depth + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [f"{pad}{reveal_value(v, depth + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + INDENT * depth + "]"
    if isinstance(value, str):
        return reveal_string(value)
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return reveal(repr(value))
