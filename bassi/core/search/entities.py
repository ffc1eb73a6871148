"""Things pasted into a request that say which kind of tool is wanted.

"get the text of https://docs.python.org/3/whatsnew" wants a tool that takes a URL, not one
about Python or docs; "email the report to team@contoso.com" wants a mail tool, not the
Teams one. Each recognised thing (URL, email address, cell range, coordinates, file path or
file name) is replaced by the words tool authors use for that kind of argument, so its
fragments stop matching unrelated tools and its kind starts matching the right ones.
"""

from __future__ import annotations

import re

_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(?:https?://|www\.)\S+"), " url "),
    (re.compile(r"(?i)\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), " email address "),
    (re.compile(r"\b[A-Z]{1,3}[0-9]{1,7}:[A-Z]{1,3}[0-9]{1,7}\b"), " range of cells "),
    (re.compile(r"-?\b\d{1,3}\.\d+\s*,\s*-?\d{1,3}\.\d+\b"), " coordinates "),
    (re.compile(r"(?:^|(?<=\s))(?:~|\.{1,2})?(?:/[\w.-]+)+/?"), " path "),
    (
        re.compile(
            r"(?i)\b[\w-]+\.(?:txt|md|json|ya?ml|toml|ini|cfg|conf|csv|tsv|log|py|js|ts|"
            r"html?|css|xml|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|zip|gz|tar|sql|db|sh)\b"
        ),
        " file ",
    ),
)


def replace_entities(text: str) -> str:
    """``text`` with each recognised thing replaced by the name of its kind."""
    for pattern, kind in _KINDS:
        text = pattern.sub(kind, text)
    return text
