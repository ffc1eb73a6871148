"""The ``bassi`` command: the chat app by default; ``bassi tools ...`` and ``bassi mcp ...``
(list, get, login, logout, approve) for scripts."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from bassi import __version__
from bassi.core.settings import Settings, SettingsError, ToolsMode


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bassi", description="A terminal chat agent that knows every tool you connect."
    )
    parser.add_argument("--version", action="version", version=f"bassi {__version__}")
    parser.add_argument(
        "--mcp-config", type=Path, metavar="PATH", help="MCP servers file (default ./.mcp.json)"
    )
    parser.add_argument("--model", help="model name (default from BASSI_MODEL)")
    parser.add_argument(
        "--tools-mode",
        choices=[m.value for m in ToolsMode],
        help="which tools the model sees: all, progressive, or auto (default)",
    )
    parser.add_argument(
        "--continue",
        dest="continue_session",
        action="store_true",
        default=None,
        help="resume the last conversation in this directory",
    )
    commands = parser.add_subparsers(dest="command")
    from bassi.mcp_cli import add_mcp_command
    from bassi.tools_cli import add_tools_command

    add_tools_command(commands)
    add_mcp_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status: 0, or what the command says; 2 for bad arguments or settings, or a
    terminal the app cannot use; 130 after Ctrl+C; 128 + N after signal N."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Ctrl+C before the app owns the terminal, or in ``bassi tools``: everything started
        # was closed on the way out; a traceback would only hide that.
        print("bassi: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env(
            mcp_config=args.mcp_config,
            model=args.model,
            tools_mode=ToolsMode(args.tools_mode) if args.tools_mode else None,
            continue_session=args.continue_session,
        )
    except SettingsError as error:
        print(f"bassi: {error}", file=sys.stderr)
        return 2
    if args.command == "tools":
        from bassi.tools_cli import run_tools_command

        return run_tools_command(args, settings)
    if args.command == "mcp":
        from bassi.mcp_cli import run_mcp_command

        return run_mcp_command(args, settings)
    if problem := _terminal_problem(settings.env):
        print(
            f"bassi: the chat app needs an interactive terminal ({problem}).\n"
            "For scripts, `bassi tools list`, `bassi tools search QUERY` and "
            "`bassi tools show NAME` work anywhere.",
            file=sys.stderr,
        )
        return 2
    # The app's imports (a third of a second) make long-lived objects, not garbage: the
    # collector would walk them over and over for nothing. It is held while they load, and
    # what they made is frozen (never walked again) before it restarts.
    gc.disable()
    from bassi.ui.app import run_app

    gc.freeze()
    gc.enable()
    return run_app(settings)


def _terminal_problem(env: Mapping[str, str]) -> str | None:
    """Why the app cannot draw here, or None. It reads keys from standard input and draws
    on standard error, and a terminal without cursor control (``TERM=dumb``: editors'
    shells, some CI) would show its escape codes as text."""
    closed = [
        name
        for name, stream in (("input", sys.stdin), ("output", sys.stdout), ("error", sys.stderr))
        if stream is None or not stream.isatty()
    ]
    if len(closed) == 1:
        return f"standard {closed[0]} is not a terminal"
    if closed:
        return f"standard {', '.join(closed[:-1])} and {closed[-1]} are not terminals"
    if env.get("TERM", "") == "dumb":
        return "TERM=dumb cannot draw it"
    return None


if __name__ == "__main__":
    sys.exit(main())
