"""How a server's command or URL is shown without the secrets in it.

``.mcp.json`` entries carry keys in all the usual places: ``--api-key=...`` arguments,
``https://user:pass@host``, ``?token=...`` query strings, headers, environment variables.
The server manager and ``bassi mcp`` show where a server runs, so they show it through here:
values whose name looks secret become ``•••``, names stay so the person recognises them.
"""

from __future__ import annotations

import hashlib
import json
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


_VARIABLE = re.compile(r"\$\{[^}]+\}")


def looks_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name.strip().lstrip("-")))


def _shown(value: str) -> str:
    """A secret's value as shown: kept when it is already a ``${VAR}`` reference (what the
    configuration took from the environment, masked that way), else dots."""
    return value if _VARIABLE.fullmatch(value) else MASK


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
        f"{key}={_shown(unquote(value))}"
        if equals and looks_secret(unquote(key))
        else key + equals + value
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
            masked.append(_shown(arg))
            hide_next = False
            continue
        name, equals, value = arg.partition("=")
        if equals and looks_secret(name):
            masked.append(f"{name}={_shown(value)}")
        elif arg.startswith("-") and not equals and looks_secret(arg):
            masked.append(arg)
            hide_next = True
        elif "://" in arg:
            masked.append(mask_url(arg))
        else:
            masked.append(arg)
    return masked


def display_target(config: ServerConfig) -> str:
    """Where the server runs, safe to show and to log: what ``${VAR}`` put in shows as the
    variable's name (``config.expanded``), and secret-looking parts written into the file
    itself as dots."""
    mask = config.expanded.mask
    if isinstance(config, HttpServerConfig):
        return mask_url(mask(config.url))
    words = [mask(config.command), *mask_args([mask(a) for a in config.args])]
    # A masked word is shown as it is: quoting it would only add noise around the dots.
    return " ".join(w if MASK in w or _VARIABLE.search(w) else shlex.quote(w) for w in words)


def identity(config: ServerConfig) -> str:
    """A digest of everything that decides how the server starts: equal digests, same
    entry. Safe to store where the entry itself (with its secrets) must not go."""
    if isinstance(config, HttpServerConfig):
        parts: list[object] = [config.type, config.url, sorted(config.headers.items())]
    else:
        parts = [config.command, list(config.args), sorted(config.env.items()), str(config.cwd)]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]
