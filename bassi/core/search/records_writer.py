"""Writes to the Whoosh index of record, in a process of their own.

Whoosh analyses, sorts and compresses in pure Python: writing ten thousand tools' documents is
several seconds of CPU holding the interpreter lock, which a cold project's start paid beside
the screen. The app's on-disk index hands its documents to a helper process at the least CPU
weight; the app keeps reading the index itself (a Whoosh searcher always opens the latest
commit). A JSON line ``{"delete": [server, ...], "add": [document, ...]}`` in, a JSON line
``{"error": null | "..."}`` out, once the change is committed (or not at all).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from bassi.core import foreground
from bassi.core.helper_process import HelperProcess


def write_documents(
    index: Any, deleted: Sequence[str], documents: Sequence[Mapping[str, Any]]
) -> None:
    """Drop the documents of the ``deleted`` servers and add ``documents``, in one commit
    (or none: a failure cancels the whole change)."""
    # Whoosh sorts each pool of postings in one C call that holds the GIL: 1 MB pools keep
    # every stall of the event loop short (measured at 3,000 tools: the longest pause of
    # another thread 1.7 s with 32 MB, 0.25 s with 1 MB, same time).
    writer = index.writer(limitmb=1)
    try:
        for name in deleted:
            writer.delete_by_term("server", name.lower())
        for document in documents:
            foreground.give_way()
            writer.add_document(**document)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()


class RecordsWriter(HelperProcess):
    """The parent's handle on the child, used from the index's updater thread."""

    def __init__(self, directory: Path, index_name: str) -> None:
        super().__init__(__name__, str(directory), index_name, purpose="the tool index writer")

    def write(self, deleted: Sequence[str], documents: Sequence[Mapping[str, Any]]) -> None:
        """``write_documents`` in the child. Raises OSError when the child cannot be started
        or stops answering, ValueError when it could not make the change."""
        line = json.dumps({"delete": list(deleted), "add": list(documents)}, ensure_ascii=True)
        problem = json.loads(self.request(line.encode("ascii"))).get("error")
        if problem is not None:
            raise ValueError(str(problem))


def serve(directory: str, index_name: str, source: IO[bytes], sink: IO[bytes]) -> None:
    """The child: each change committed, then answered."""
    from whoosh.filedb.filestore import FileStorage

    for line in source:
        change = json.loads(line)
        try:
            index = FileStorage(directory).open_index(index_name)
            write_documents(index, change["delete"], change["add"])
            problem = None
        except Exception as exc:
            problem = f"{exc.__class__.__name__}: {exc}"
        sink.write(json.dumps({"error": problem}).encode("ascii") + b"\n")
        sink.flush()


if __name__ == "__main__":
    from bassi.core.cpu_priority import lower_this_process

    lower_this_process()
    serve(sys.argv[1], sys.argv[2], sys.stdin.buffer, sys.stdout.buffer)
