"""The background schema check, in a process of its own.

Checking a schema against its draft's metaschema is pure Python and slow (milliseconds per
schema, about thirty seconds of CPU for ten thousand tools). Run on a thread of the app, it
competes with the event loop for the interpreter lock the whole time servers start, and the
terminal stalls for up to a second at a time. In a child process it has its own interpreter,
and the app only sends schemas and reads one line of verdicts back per batch.

The child knows nothing but this: a JSON line ``{"<key>": <schema>, ...}`` in, a JSON line
``{"<key>": <problem or null>, ...}`` out, until its stdin closes (when bassi exits, however it
exits). Arguments are still checked in the app, with schemas compiled there on a tool's first
call; the child only says early which schemas cannot be used. It runs at the lowest CPU
priority: its answers are never urgent, the screen is.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

logger = logging.getLogger(__name__)

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
"""The directory holding the ``bassi`` package, put on the child's path: bassi may be run from
a checkout that is not installed."""


class SchemaWorker:
    """The parent's handle on the child process. Used from one thread at a time (the schema
    checker's); the blocking reads release the interpreter lock."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def problems(self, schemas: Mapping[str, Mapping[str, Any]]) -> dict[str, str | None]:
        """Each schema's problem (None when it is usable), by the caller's key. Raises
        OSError when the child cannot be started or stops answering."""
        process = self._started()
        stdin, stdout = _pipes(process)
        line = json.dumps(schemas, ensure_ascii=False, default=str).encode("utf-8", "replace")
        try:
            stdin.write(line + b"\n")
            stdin.flush()
            answer = stdout.readline()
        except (OSError, ValueError) as exc:
            self.close()
            raise OSError(f"the schema checker stopped: {exc}") from exc
        if not answer:
            code = process.poll()
            self.close()
            raise OSError(f"the schema checker exited (code {code})")
        verdicts = json.loads(answer)
        return {key: verdicts.get(key) for key in schemas}

    def close(self) -> None:
        """Stop the child now (it keeps nothing worth finishing). Safe to call from another
        thread while :meth:`problems` waits: that call then raises OSError."""
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    logger.debug("closing the schema checker's pipes", exc_info=True)

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p
            )
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        return self._process


def _pipes(process: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """The child: a batch of schemas in, their problems out, one line each."""
    from bassi.core.validation import compile_schema

    for line in source:
        schemas = json.loads(line)
        verdicts = {key: compile_schema(schema).problem for key, schema in schemas.items()}
        sink.write(json.dumps(verdicts, ensure_ascii=False).encode("utf-8") + b"\n")
        sink.flush()


if __name__ == "__main__":
    from bassi.core.cpu_priority import lower_this_process

    lower_this_process()
    serve(sys.stdin.buffer, sys.stdout.buffer)
