"""Slash commands: what exists, how a line is parsed, and the ``/help`` text.

The table is the single source for parsing, ``/help``, and autocompletion. Each command names
the method of the chat screen that carries it out (``handler``), the way Textual bindings
name actions, so the screen stays the one place that acts and this module stays pure.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum


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
        "approve",
        "/approve",
        "Review this project's servers and rules, and approve them",
        "command_approve",
    ),
    SlashCommand("cost", "/cost", "Tokens and cost of this session", "command_cost"),
    SlashCommand("resume", "/resume", "Pick a recent conversation to continue", "command_resume"),
    SlashCommand("clear", "/clear", "Clear the chat log", "command_clear"),
    SlashCommand("quit", "/quit", "Leave bassi", "command_quit"),
)

KEYS: tuple[tuple[str, str], ...] = (
    ("enter", "send the message or command"),
    ("up / down", "walk the input history"),
    ("tab", "accept the completion shown in grey; without one, move focus into the log"),
    ("esc, ctrl+c", "interrupt the reply while it streams"),
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


def is_command(line: str) -> bool:
    return line.lstrip().startswith("/")


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
