"""The system prompt: the tool landscape in a few lines, and how to reach the rest.

It is sent with every request, so it stays short: one line per server with its tool count and
what its tools are about (the most frequent words of its tool names), never the tools
themselves in progressive mode. The model learns the rest through ``tool_search``.
"""

from __future__ import annotations

import re
from collections import Counter

from bassi.core.registry import Registry, ServerEntry, ServerStatus
from bassi.core.safe_text import one_line
from bassi.core.settings import ToolsMode

TOPIC_WORDS = 6

# Verbs and fillers say what a tool does to something, not what it is about.
# fmt: off
_GENERIC = frozenset({
    "get", "list", "create", "update", "delete", "remove", "set", "add", "new", "read", "write",
    "search", "find", "by", "for", "of", "to", "and", "or", "the", "a", "an", "in", "on", "from",
    "with", "all", "item", "items", "info", "data", "mcp", "tool", "tools",
})
# fmt: on
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

INTRO = (
    "You are bassi, an assistant working in the user's terminal. You act through tools that "
    "MCP servers provide; each tool is named mcp__<server>__<tool>."
)
PROGRESSIVE = (
    "Most tools are not loaded. To use one, call mcp__bassi__tool_search with a few words "
    "about the task: it answers matching tools and loads the best ones, so call them right "
    "away. mcp__bassi__tool_load loads exact names, tool_describe shows a tool's parameters, "
    "tool_active lists what is loaded. A tool that is not loaded cannot be called: the call "
    'fails with "No such tool available"; search for it or load it, then call it again.'
)
ALL = "Every tool of these servers is loaded."


def topics(entry: ServerEntry) -> str:
    """What a server's tools are about, in a few words: never the tool names themselves,
    which the model would then try to call without loading them."""
    own = {w.lower() for w in _WORD.findall(entry.name)}
    counts: Counter[str] = Counter()
    for tool in entry.tools:
        words = dict.fromkeys(w.lower() for w in _WORD.findall(tool.name))
        counts.update(w for w in words if w not in _GENERIC and w not in own and len(w) > 1)
    for word in [w for w in counts if w.endswith("s") and w[:-1] in counts]:
        counts[word[:-1]] += counts.pop(word)
    if not counts and entry.tools:
        return one_line(entry.tools[0].summary, 80)
    return ", ".join(word for word, _ in counts.most_common(TOPIC_WORDS))


def server_line(entry: ServerEntry) -> str:
    count = len(entry.tools)
    head = f"- {entry.name} ({count} tool{'s' if count != 1 else ''})"
    if entry.status is ServerStatus.FAILED:
        return f"{head}: unavailable ({one_line(entry.error or 'failed', 100)})"
    if entry.status is ServerStatus.PENDING:
        return f"{head}: not started, waiting for the user's approval"
    if entry.status is not ServerStatus.CONNECTED:
        return f"{head}: {entry.status}"
    about = topics(entry)
    return f"{head}: {about}" if about else head


def build_system_prompt(registry: Registry, mode: ToolsMode) -> str:
    """bassi's part of the prompt; the session adds the user's ``system_prompt_extra``."""
    servers = [e for e in registry.servers() if e.status is not ServerStatus.DISABLED]
    parts = [INTRO]
    if servers:
        parts.append("Tool servers:\n" + "\n".join(server_line(e) for e in servers))
    parts.append(PROGRESSIVE if mode is ToolsMode.PROGRESSIVE else ALL)
    return "\n\n".join(parts)
