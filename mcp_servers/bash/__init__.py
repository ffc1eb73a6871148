"""The ``bash`` server: one tool, ``execute``, that runs a shell command in the project."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from mcp_servers._process import SUPERVISED, ProcessLimits, command_environment, run_process
from mcp_servers._toolkit import ServerDefinition, ToolArgs, ToolFailure, ToolOutput, ToolSpec

ENV_PREFIX = "BASSI_BASH"


class ExecuteArgs(ToolArgs):
    command: str = Field(min_length=1, description="The shell command line to run.")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds before the command is killed."
    )
    cwd: str | None = Field(
        default=None,
        description="Directory to run in, relative to the project directory or absolute. "
        "Defaults to the project directory.",
    )


def define_server(project_dir: Path, *, env: Mapping[str, str] | None = None) -> ServerDefinition:
    project_dir = project_dir.resolve()
    limits = ProcessLimits.from_env(ENV_PREFIX, env)
    child_env = command_environment(env)
    shell = shutil.which("bash") or "/bin/sh"

    async def execute(args: ExecuteArgs) -> ToolOutput:
        timeout = limits.timeout_for(args.timeout)
        cwd = project_dir / args.cwd if args.cwd else project_dir
        if not cwd.is_dir():
            raise ToolFailure(f"cwd {args.cwd!r} is not a directory (resolved to {cwd})")
        result = await run_process(
            [shell, "-c", args.command],
            cwd=cwd,
            env=child_env,
            time_limit=timeout,
            output_limit=limits.output_limit,
        )
        return result.to_tool_result()

    description = (
        "Run a shell command (bash) in the project directory and get its exit code, stdout "
        "and stderr. Use it to inspect and change the project: list and search files, run "
        "git, build and test commands, install packages, call command-line programs. "
        "Each call starts a fresh shell: `cd` and variables do not carry over (use `cwd`). "
        "There is no stdin, so interactive programs get end-of-file and stop; pass "
        "non-interactive flags instead. Background jobs"
        + (", detached ones included," if SUPERVISED else "")
        + " are killed when the command ends: nothing keeps running after the call. "
        + limits.describe()
    )
    tool = ToolSpec(
        name="execute",
        description=description,
        args=ExecuteArgs,
        handler=execute,
        annotations={
            "title": "Run a shell command",
            "destructiveHint": True,
            "openWorldHint": True,
        },
    )
    return ServerDefinition("bash", f"Runs shell commands in {project_dir}.", [tool])
