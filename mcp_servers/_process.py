"""Running one command for a tool: with no stdin, a time limit and an output cap, and nothing
left running afterwards; shared by the bash and task_automation servers.

On Linux the command runs under ``_supervisor.py``, a small process that is a child subreaper:
when the command ends, times out or the call is cancelled, and when the server itself dies
(even by SIGKILL), it kills the command's process group and every process that escaped it
(``setsid``, a double fork). Elsewhere the command gets a session of its own and only that
process group is killed: a process that left the group can outlive the call there.

The command's environment is the server's without the agent's credentials
(``bassi.core.secrets.without_agent_credentials``): a shell command or a script the model
wrote has no business reading the Anthropic API key.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from bassi.core.secrets import without_agent_credentials
from mcp_servers._toolkit import ToolFailure, ToolOutput, env_number, text_result

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
OUTPUT_LIMIT = 30_000
"""Bytes kept of each of stdout and stderr: the first and the last half."""

DRAIN_GRACE = 1.0
"""Seconds to wait for the output pipes to close after everything was killed. Only a process
that escaped (possible without the supervisor) can hold them open that long; its output is
then cut off."""
SUPERVISOR_GRACE = 5.0
"""Seconds the supervisor gets to kill everything and exit once asked to."""

SUPERVISED = sys.platform == "linux"
"""Whether commands run under ``_supervisor.py``: it needs Linux's child subreaper and
parent-death signal."""
_SUPERVISOR = (sys.executable, "-I", "-S", str(Path(__file__).with_name("_supervisor.py")))


@dataclass(frozen=True)
class ProcessLimits:
    default_timeout: float = DEFAULT_TIMEOUT
    max_timeout: float = MAX_TIMEOUT
    output_limit: int = OUTPUT_LIMIT

    @classmethod
    def from_env(cls, prefix: str, env: Mapping[str, str] | None = None) -> ProcessLimits:
        """``<prefix>_TIMEOUT``, ``<prefix>_MAX_TIMEOUT`` and the shared ``BASSI_OUTPUT_LIMIT``."""
        max_timeout = env_number(env, f"{prefix}_MAX_TIMEOUT", MAX_TIMEOUT)
        return cls(
            default_timeout=min(env_number(env, f"{prefix}_TIMEOUT", DEFAULT_TIMEOUT), max_timeout),
            max_timeout=max_timeout,
            output_limit=int(env_number(env, "BASSI_OUTPUT_LIMIT", OUTPUT_LIMIT)),
        )

    def timeout_for(self, requested: float | None) -> float:
        if requested is None:
            return self.default_timeout
        if requested > self.max_timeout:
            raise ToolFailure(
                f"timeout {requested:g} s is above the maximum of {self.max_timeout:g} s; "
                "split the work into shorter steps or run it in the background yourself"
            )
        return requested

    def describe(self) -> str:
        return (
            f"Timeout: {self.default_timeout:g} s unless you pass `timeout` "
            f"(at most {self.max_timeout:g} s). Of stdout and stderr, the first and last "
            f"{self.output_limit // 2} bytes each are kept."
        )


class CappedOutput:
    """Keeps the head and the tail of a stream, so memory stays bounded however much a command
    prints, and both how it started and how it ended stay visible."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit - limit // 2
        self._tail_limit = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self._tail_limit:
            self._tail += chunk
            del self._tail[: max(0, len(self._tail) - self._tail_limit)]

    def text(self) -> str:
        head = self._head.decode(errors="replace")
        cut = self.total - len(self._head) - len(self._tail)
        if cut <= 0:
            return head + self._tail.decode(errors="replace")
        marker = f"\n[... {cut} bytes cut; {self.total} bytes in all ...]\n"
        return head + marker + self._tail.decode(errors="replace")


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int
    """Negative for a process ended by a signal (``-9`` after a timeout kill)."""
    stdout: str
    stderr: str
    timed_out: bool
    timeout: float
    elapsed: float

    def to_tool_result(self) -> ToolOutput:
        """What the model reads. A non-zero exit is an error result, as with Claude Code's own
        Bash tool, so a failed step stands out in the transcript."""
        if self.timed_out:
            status = (
                f"Timed out after {self.timeout:g} s: the process and everything it started "
                "were killed. Output so far:"
            )
        elif self.exit_code < 0:
            status = f"Killed by signal {_signal_name(-self.exit_code)} after {self.elapsed:.1f} s"
        else:
            status = f"Exit code {self.exit_code} after {self.elapsed:.1f} s"
        sections = [status]
        for name, output in (("stdout", self.stdout), ("stderr", self.stderr)):
            sections += [f"--- {name} ---", output.removesuffix("\n") or "(empty)"]
        text = "\n".join(sections)
        return text_result(text, error=self.timed_out or self.exit_code != 0)


def command_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a command runs with: the server's environment (``env``, else the process's)
    without the agent's credentials."""
    return without_agent_credentials(os.environ if env is None else env)


def supervised(argv: Sequence[str]) -> list[str]:
    """``argv`` run under the supervisor, watching this process."""
    return [*_SUPERVISOR, str(os.getpid()), *argv]


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    time_limit: float,
    output_limit: int,
) -> ProcessResult:
    """Run ``argv`` with environment ``env`` until it exits or ``time_limit`` seconds pass,
    then end everything it started. Cancelling the caller does the same, so a dropped call
    leaves nothing behind."""
    started = anyio.current_time()
    stdout, stderr = CappedOutput(output_limit), CappedOutput(output_limit)
    try:
        process = await anyio.open_process(
            supervised(argv) if SUPERVISED else list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            # The supervisor stays in the server's process group, so whatever stops the
            # server's group stops it too; it gives the command a session of its own.
            start_new_session=not SUPERVISED,
        )
    except OSError as exc:
        raise ToolFailure(f"Could not start {argv[0]} in {cwd}: {exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    try:
        async with anyio.create_task_group() as readers:
            readers.start_soon(_drain, process.stdout, stdout)
            readers.start_soon(_drain, process.stderr, stderr)
            with anyio.move_on_after(time_limit) as waiting:
                await process.wait()
            await _end(process)
            readers.cancel_scope.deadline = anyio.current_time() + DRAIN_GRACE
    finally:
        with anyio.CancelScope(shield=True):
            await _end(process)
            await process.aclose()
    return ProcessResult(
        exit_code=process.returncode if process.returncode is not None else -signal.SIGKILL,
        stdout=stdout.text(),
        stderr=stderr.text(),
        timed_out=waiting.cancelled_caught,
        timeout=time_limit,
        elapsed=anyio.current_time() - started,
    )


async def _end(process: Process) -> None:
    """Stop the command and everything it started. The supervisor is asked (SIGTERM) and
    waited for, since only it can find the escaped processes; SIGKILL is for a supervisor
    that does not finish in time, which leaves what it could not kill to the system."""
    if not SUPERVISED:
        _kill_group(process.pid)
        return
    if process.returncode is not None:
        return
    with suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    with anyio.move_on_after(SUPERVISOR_GRACE):
        await process.wait()
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def _drain(stream: ByteReceiveStream, sink: CappedOutput) -> None:
    async for chunk in stream:
        sink.feed(chunk)


def _kill_group(pgid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
