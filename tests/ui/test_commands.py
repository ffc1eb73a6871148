"""Parsing slash commands and completing them: the messages a person gets for mistakes."""

from __future__ import annotations

import pytest

from bassi.core.tools import ToolInfo
from bassi.ui.commands import COMMANDS, CommandError, parse
from bassi.ui.completion import completions, tool_names


@pytest.mark.parametrize(
    ("line", "words", "argument"),
    [
        ("/help", "help", ""),
        ("  /tools  ", "tools", ""),
        ("/tools search send  an email", "tools search", "send an email"),
        ("/TOOLS PINNED", "tools pinned", ""),
        ("/tool git/git_status", "tool", "git/git_status"),
        ("/tool unpin mcp__git__git_status", "tool unpin", "mcp__git__git_status"),
        ("/quit", "quit", ""),
    ],
)
def test_parse_finds_the_longest_command(line: str, words: str, argument: str) -> None:
    invocation = parse(line)
    assert invocation.command.words == words
    assert invocation.argument == argument


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/", "Type a command after '/'"),
        ("/tool", "/tool needs an argument: /tool <name>"),
        ("/tools search", "/tools search needs an argument: /tools search <query>"),
        ("/tool unpin", "needs an argument: /tool unpin <name>"),
        ("/help me", "/help takes no argument"),
        ("/tols", "Unknown command /tols. Did you mean /tools"),
        ("/tools frob", "Unknown command /tools frob."),
        ("/xyzzy", "Unknown command /xyzzy. Type /help for the list."),
    ],
)
def test_parse_errors_say_what_to_do(line: str, message: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse(line)
    assert message in str(caught.value)


def test_every_command_is_reachable_by_completion() -> None:
    for command in COMMANDS:
        assert any(
            c.strip() == command.text
            for c in completions("/", [], [])
            + completions(command.text[:3], [], [])
            + completions(command.text[:-1], [], [])
        ), command.text


def test_tool_names_offer_bare_names_only_when_unique() -> None:
    tools = [ToolInfo("fs", "read"), ToolInfo("web", "read"), ToolInfo("git", "git_log")]
    assert tool_names(tools) == ["fs/read", "git_log", "web/read", "git/git_log"]
    assert completions("/tool w", tools, []) == ["/tool web/read"]
    assert completions("hello", tools, []) == []
