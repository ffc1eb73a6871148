"""The ``task_automation`` server: ``execute_python`` runs a script in a separate, isolated
interpreter, for batch work on the project's files."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import anyio
from pydantic import Field

from mcp_servers._process import ProcessLimits, command_environment, run_process
from mcp_servers._toolkit import ServerDefinition, ToolArgs, ToolOutput, ToolSpec

ENV_PREFIX = "BASSI_PYTHON"


class ExecutePythonArgs(ToolArgs):
    code: str = Field(min_length=1, description="A complete Python 3 program to run.")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds before the program is killed."
    )


def define_server(project_dir: Path, *, env: Mapping[str, str] | None = None) -> ServerDefinition:
    project_dir = project_dir.resolve()
    limits = ProcessLimits.from_env(ENV_PREFIX, env)
    child_env = command_environment(env)

    async def execute_python(args: ExecutePythonArgs) -> ToolOutput:
        timeout = limits.timeout_for(args.timeout)
        # The program goes into a file rather than ``-c`` so a long script is not limited by
        # the command-line length, and tracebacks name real line numbers.
        with tempfile.TemporaryDirectory(prefix="bassi-python-") as scratch:
            script = Path(scratch) / "task.py"
            await anyio.Path(script).write_text(args.code, encoding="utf-8")
            result = await run_process(
                [sys.executable, "-I", "-u", str(script)],
                cwd=project_dir,
                env=child_env,
                time_limit=timeout,
                output_limit=limits.output_limit,
            )
        return result.to_tool_result()

    description = (
        "Run a Python 3 program in a separate, isolated interpreter (`python -I`) whose "
        "working directory is the project directory; get its exit code, stdout and stderr. "
        "Use it for batch work on files that would be awkward as shell commands: renaming or "
        "sorting many files, image processing, converting or analysing data (CSV, JSON, "
        "Excel), bulk text edits. The standard library and the packages installed next to "
        "bassi are available. Nothing persists between calls (write results to files); "
        "print what you want to see. There is no stdin, so input() fails. " + limits.describe()
    )
    tool = ToolSpec(
        name="execute_python",
        description=description,
        args=ExecutePythonArgs,
        handler=execute_python,
        annotations={
            "title": "Run a Python program",
            "destructiveHint": True,
            "openWorldHint": True,
        },
    )
    return ServerDefinition(
        "task_automation", f"Runs Python programs for batch work in {project_dir}.", [tool]
    )
