"""Text from servers and the model is data, never instructions to the terminal.

Tool names, descriptions, arguments and results come from programs bassi does not control.
Before anything displays them, escape sequences and control characters are removed here;
the display layer then renders the result as plain text (never as Rich markup).
"""

from __future__ import annotations

import re

# CSI / OSC / other ESC sequences (including 8-bit C1 forms), then any remaining C0/C1 control
# character except newline and tab.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c)"  # OSC ... BEL/ST
    r"|\x1b[PX^_].*?(?:\x1b\\|\x9c)"  # DCS, SOS, PM, APC ... ST
    r"|\x1b[@-Z\\-_]"  # two-byte sequences
    r"|\x1b",
    re.DOTALL,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: str, *, max_chars: int | None = None) -> str:
    """Remove terminal escapes and control characters; optionally cap the length, marking
    the cut so a reader knows text is missing."""
    text = _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))
    if max_chars is not None and len(text) > max_chars:
        return text[:max_chars] + f"… [{len(text) - max_chars:,} more characters]"
    return text


def one_line(text: str, max_chars: int = 120) -> str:
    """The first non-empty line, cleaned and capped: for tables and status lines."""
    for line in clean(text).splitlines():
        if line.strip():
            line = " ".join(line.split())
            return line if len(line) <= max_chars else line[: max_chars - 1] + "…"
    return ""
