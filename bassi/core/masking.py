"""How a server's command or URL is shown without the secrets in it.

``.mcp.json`` entries carry keys in all the usual places: ``--api-key=...`` arguments,
``https://user:pass@host``, ``?token=...`` query strings, headers, environment variables.
The server manager and ``bassi mcp`` show where a server runs, so they show it through here:
values whose name looks secret become ``•••``, names stay so the person recognises them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

from bassi.core.mcp_config import HttpServerConfig, ServerConfig

MASK = "•••"
_SECRET_NAME = re.compile(
    r"(token|secret|passw|pwd|api[-_]?key|apikey|access[-_]?key|private[-_]?key|auth|"
    r"credential|signature|sig$|cookie|session|bearer|client[-_]?secret|^key$|[-_]key$)",
    re.IGNORECASE,
)


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name.strip().lstrip("-")))


def mask_url(url: str) -> str:
    """The URL without its user info and with secret-looking query values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    pairs = [pair.partition("=") for pair in parts.query.split("&")] if parts.query else []
    query = "&".join(
        f"{key}={MASK}" if equals and looks_secret(unquote(key)) else key + equals + value
        for key, equals, value in pairs
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_args(args: Sequence[str]) -> list[str]:
    """Arguments with the values of secret-looking options masked: ``--token X``,
    ``--api-key=X``, ``API_KEY=X``, and URLs."""
    masked: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            masked.append(MASK)
            hide_next = False
            continue
        name, equals, _ = arg.partition("=")
        if equals and looks_secret(name):
            masked.append(f"{name}={MASK}")
        elif arg.startswith("-") and not equals and looks_secret(arg):
            masked.append(arg)
            hide_next = True
        elif "://" in arg:
            masked.append(mask_url(arg))
        else:
            masked.append(arg)
    return masked


def display_target(config: ServerConfig) -> str:
    """Where the server runs, safe to show and to log."""
    if isinstance(config, HttpServerConfig):
        return mask_url(config.url)
    words = [config.command, *mask_args(config.args)]
    # A masked word is shown as it is: quoting it would only add noise around the dots.
    return " ".join(word if MASK in word else shlex.quote(word) for word in words)
