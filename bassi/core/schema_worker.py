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
import sys
from collections.abc import Mapping
from typing import IO, Any

from bassi.core.helper_process import HelperProcess


class SchemaWorker(HelperProcess):
    """The parent's handle on the child process, used from the schema checker's thread."""

    def __init__(self) -> None:
        super().__init__(__name__, purpose="the schema checker")

    def problems(self, schemas: Mapping[str, Mapping[str, Any]]) -> dict[str, str | None]:
        """Each schema's problem (None when it is usable), by the caller's key. Raises
        OSError when the child cannot be started or stops answering."""
        line = json.dumps(schemas, ensure_ascii=False, default=str).encode("utf-8", "replace")
        verdicts = json.loads(self.request(line))
        return {key: verdicts.get(key) for key in schemas}


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
