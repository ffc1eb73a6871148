"""Slash commands: what exists, how a line is parsed, and the ``/help`` text.

The table is the single source for parsing, ``/help``, and autocompletion. Each command names
the method of the chat screen that carries it out (``handler``), the way Textual bindings
name actions, so the screen stays the one place that acts and this module stays pure.
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass
from enum import Enum

from bassi.core.offers import PromptInfo


class Argument(Enum):
    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True)
class SlashCommand:
    words: str
    """The command after the slash, possibly two words: ``tools search``."""
    usage: str
    summary: str
    handler: str
    argument: Argument = Argument.NONE
    private: bool = False
    """A line starting with it is never kept in the input history (it may hold a secret)."""

    @property
    def text(self) -> str:
        return f"/{self.words}"


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "/help", "Show commands and keys", "command_help"),
    SlashCommand("tools", "/tools", "Show every server and its tools, current", "command_tools"),
    SlashCommand(
        "tools search",
        "/tools search <query>",
        "Find tools; select a row to open its card",
        "command_tools_search",
        Argument.REQUIRED,
    ),
    SlashCommand("tools pinned", "/tools pinned", "List pinned tools", "command_tools_pinned"),
    SlashCommand(
        "tool",
        "/tool <name>",
        "Show a tool's card and pin it (the agent may then use it)",
        "command_tool",
        Argument.REQUIRED,
    ),
    SlashCommand(
        "tool unpin",
        "/tool unpin <name>",
        "Unpin a tool",
        "command_tool_unpin",
        Argument.REQUIRED,
    ),
    SlashCommand(
        "mcp",
        "/mcp",
        "MCP servers: status, errors; reconnect, enable/disable, sign in/out",
        "command_mcp",
    ),
    SlashCommand(
        "approve",
        "/approve",
        "Review this project's servers and rules, and approve them",
        "command_approve",
    ),
    SlashCommand("cost", "/cost", "Tokens and cost of this session", "command_cost"),
    SlashCommand("resume", "/resume", "Pick a recent conversation to continue", "command_resume"),
    SlashCommand(
        "clear",
        "/clear",
        "Start a new conversation (this one stays in /resume); cost starts again",
        "command_clear",
    ),
    SlashCommand(
        "login",
        "/login",
        "Paste an API key for this session (not saved)",
        "command_login",
        private=True,
    ),
    SlashCommand("quit", "/quit", "Leave bassi", "command_quit"),
)

KEYS: tuple[tuple[str, str], ...] = (
    ("enter", "send the message or command"),
    ("up / down", "walk the input history"),
    ("tab", "accept the completion shown in grey"),
    ("shift+tab", "move focus into the log (then enter expands what is focused)"),
    ("@server:uri", "in a message: attach that resource (Tab completes the listed ones)"),
    ("esc, ctrl+c", "interrupt the reply while it streams"),
    ("ctrl+o", "expand or fold the newest long tool result"),
    ("ctrl+p", "command palette: search tools, open their cards"),
    ("page up / down", "scroll the log (scrolled up, it stops following new output)"),
    ("enter (in the log)", "expand a focused catalog group or tool result; open a search row"),
    ("ctrl+q", "quit"),
)


@dataclass(frozen=True)
class Invocation:
    command: SlashCommand
    argument: str


class CommandError(ValueError):
    """A line that starts with ``/`` but is not a valid command; the message says what to do."""


PROMPT_PREFIX = "mcp__"
"""Slash commands of MCP prompts: ``/mcp__<server>__<prompt>``, as in Claude Code."""


def prompt_command(line: str) -> tuple[str, str] | None:
    """``/mcp__srv__p a b`` -> ("mcp__srv__p", "a b"); None for any other line."""
    head, _, rest = line.strip()[1:].partition(" ")
    return (head, rest.strip()) if head.startswith(PROMPT_PREFIX) else None


def prompt_arguments(prompt: PromptInfo, text: str) -> tuple[dict[str, str], list[str]]:
    """The arguments typed after a prompt command: ``name=value`` pairs, or values in the
    prompt's argument order (quote a value with spaces). Returns them and the names of the
    required arguments still missing. Raises CommandError for text that does not parse."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise CommandError(f"Cannot read the arguments: {exc}") from None
    names = [a.name for a in prompt.arguments]
    values: dict[str, str] = {}
    positional = iter(n for n in names)
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name in names:
            values[name] = value
            continue
        slot = next((n for n in positional if n not in values), None)
        if slot is None:
            raise CommandError(
                f"/{prompt.command} takes {len(names)} argument(s): {' '.join(names) or 'none'}"
            )
        values[slot] = word
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    return values, missing


def is_command(line: str) -> bool:
    return line.lstrip().startswith("/")


def is_private(line: str) -> bool:
    """Whether ``line`` starts with a command that may carry a secret (``/login sk-...``)."""
    words = line.strip()[1:].split()
    return bool(words) and any(c.private and c.words == words[0].lower() for c in COMMANDS)


def parse(line: str) -> Invocation:
    """``/tools search mail`` -> (tools search, "mail"). The longest command whose words begin
    the line wins, so ``/tool unpin x`` is not ``/tool`` with the argument ``unpin x``."""
    words = line.strip()[1:].split()
    if not words:
        raise CommandError("Type a command after '/'; /help lists them.")
    for count in (2, 1):
        head = " ".join(words[:count]).lower()
        command = next((c for c in COMMANDS if c.words == head), None)
        if command is None:
            continue
        argument = " ".join(words[count:])
        if command.argument is Argument.REQUIRED and not argument:
            raise CommandError(f"{command.text} needs an argument: {command.usage}")
        if command.argument is Argument.NONE and argument:
            if count == 1 and any(c.words.startswith(head + " ") for c in COMMANDS):
                raise CommandError(_unknown(f"{head} {words[1]}"))
            raise CommandError(f"{command.text} takes no argument: {command.usage}")
        return Invocation(command, argument)
    raise CommandError(_unknown(words[0]))


def _unknown(words: str) -> str:
    names = [c.words for c in COMMANDS]
    close = difflib.get_close_matches(words.lower(), names, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join('/' + c for c in close)}?" if close else ""
    return f"Unknown command /{words}.{hint} Type /help for the list."
