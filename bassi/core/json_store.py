"""JSON files bassi reads and writes: read without surprises, written without losing anything.

Reading. Every JSON file bassi reads (``.mcp.json``, the Claude settings files, its own state)
goes through :func:`read_text` and :func:`loads`. A FIFO, device or directory where a file
should be is refused before it is opened, so it cannot hang start-up. Nesting deeper than
``MAX_DEPTH`` is refused before the parser sees it (Python's parser would raise
``RecursionError`` at about a thousand levels, and anything walking the result later could
too). ``NaN`` and ``Infinity``, which Python's parser accepts and JSON does not, are refused
with the key they stand at. Every problem is a :class:`JsonFileError` naming the file.

Writing. A :class:`JsonStore` is one file that several bassi processes may share (two
instances in one project). It keeps the value in memory and records each change as a
function; a background thread replays the pending changes on what is on disk *now*, under an
advisory lock, and replaces the file atomically. So one instance's additions survive the
other's writes, and a removal is an operation of its own, never a stale copy that brings an
entry back. The caller never waits for the disk. When the file cannot be written (read-only
or missing directory, a file where the directory should be, a full disk) the store says so
once and keeps the state in memory for the rest of the run.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import json
import math
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects accepted in a file bassi reads. Its own files and
Claude Code's are a handful of levels deep; a hundred leaves room for anything honest."""


class JsonFileError(ValueError):
    """A file that cannot be used as JSON. ``reason`` says why without the path, for messages
    that name the file their own way; ``str()`` gives both."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NonFinite:
    """Stands where a file had ``NaN``, ``Infinity`` or a number too large for a float, when
    :func:`loads` was asked to keep them (so a caller can refuse one entry, not the file)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key written twice in one object. The parser keeps the later value, as JSON parsers
    (Claude Code's included) do."""

    path: tuple[str, ...]
    """The keys leading to the object holding the duplicate (``()`` for the top level)."""
    key: str
    first_line: int
    later_line: int


def read_text(path: Path) -> str:
    """The file's text. Raises FileNotFoundError when it is missing, JsonFileError when it is
    not a regular file or not UTF-8, OSError when it cannot be read. A FIFO, device or
    directory is refused from its ``stat``, before any blocking open."""
    _require_regular(path, os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as handle:
        # The path may have been swapped between the stat and the open.
        _require_regular(path, os.fstat(fd).st_mode)
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonFileError(path, f"not UTF-8 text (byte {exc.start})") from None


def _require_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    raise JsonFileError(path, f"is {kind}, not a regular file; it was not read")


def loads(
    text: str,
    source: Path | str,
    *,
    keep_non_finite: bool = False,
    duplicates: list[DuplicateKey] | None = None,
) -> Any:
    """Parse ``text`` (read from ``source``, named in errors).

    Raises JsonFileError for invalid JSON, nesting deeper than ``MAX_DEPTH``, and ``NaN`` /
    ``Infinity`` (naming the key), unless ``keep_non_finite``, which leaves a
    :class:`NonFinite` in their place. Keys written twice are appended to ``duplicates`` when
    it is given."""
    found = _scan(text, source, want_keys=duplicates is not None)
    try:
        data = json.loads(text, parse_constant=NonFinite, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise JsonFileError(
            source, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        raise JsonFileError(source, f"invalid JSON: {exc}") from None
    if not keep_non_finite and (where := first_non_finite(data)) is not None:
        key, value = where
        raise JsonFileError(
            source, f'"{key}" is {value.text}, which JSON does not allow; use a number'
        )
    if duplicates is not None:
        duplicates.extend(found)
    return data


def _float(text: str) -> float | NonFinite:
    value = float(text)
    return value if math.isfinite(value) else NonFinite(text)


def first_non_finite(data: Any) -> tuple[str, NonFinite] | None:
    """The first :class:`NonFinite` in ``data`` with the path to it (``a.b[2]``), or None.
    Iterative: ``data`` came from a file, so its depth is bounded, but no recursion is
    needed either."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, NonFinite):
            return path or "(the whole file)", value
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
    return None


# A string (with the colon after it when it is an object's key) or a bracket; whatever else is
# between them cannot change the nesting.
_TOKENS = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")(\s*:)?|[\[\]{}]', re.DOTALL)


def _scan(text: str, source: Path | str, *, want_keys: bool) -> list[DuplicateKey]:
    """Check the nesting depth without parsing (so without recursion); with ``want_keys``,
    also find keys written twice in one object."""
    depth = 0
    keys: list[dict[str, int] | None] = []
    """Per open container: for an object, its keys and where each was written."""
    path: list[str] = []
    last_key = ""
    found: list[DuplicateKey] = []
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                raise JsonFileError(
                    source, f"nested more than {MAX_DEPTH} levels deep (at line {line})"
                )
            if want_keys:
                keys.append({} if token == "{" else None)
                path.append(last_key)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
            if want_keys and keys:
                keys.pop()
                path.pop()
        elif want_keys and match.group(2) and keys and keys[-1] is not None:
            try:
                last_key = json.loads(match.group(1))
            except ValueError:
                continue
            seen = keys[-1]
            if last_key in seen:
                found.append(
                    DuplicateKey(
                        tuple(path[1:]),
                        last_key,
                        text.count("\n", 0, seen[last_key]) + 1,
                        text.count("\n", 0, match.start()) + 1,
                    )
                )
            seen[last_key] = match.start()
    return found


def salvage_list(text: str) -> list[Any]:
    """The complete leading elements of a JSON array whose end is damaged (a write cut
    short): every element that parses, up to the first that does not."""
    decoder = json.JSONDecoder(parse_constant=NonFinite, parse_float=_float)
    items: list[Any] = []
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        return items
    position += 1
    while True:
        position = _skip_space(text, position)
        try:
            item, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            return items
        items.append(item)
        position = _skip_space(text, position)
        if not text.startswith(",", position):
            return items
        position += 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


# ---------------------------------------------------------------------------------------------
# Writing

T = TypeVar("T")
Change = Callable[[T], T]
"""Applied to the value in memory at once, and later to the value on disk at write time."""
Warn = Callable[[str], None]

_writer: ThreadPoolExecutor | None = None
_writer_lock = threading.Lock()


def _background() -> ThreadPoolExecutor:
    """One writer thread for every store: writes are small and rare, and one thread keeps
    them in order. Python finishes its queued work before the interpreter exits."""
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bassi-store")
        return _writer


class JsonStore(Generic[T]):
    """One JSON file, shared by every bassi process that opens it.

    ``parse`` turns what the file holds into the value's shape, dropping entries that do
    not fit, and raises ValueError when the whole is of the wrong kind (the file is then
    treated as damaged); ``default`` is the value of a missing or unreadable file.
    ``salvage`` keeps the readable leading entries of a damaged list file.
    """

    def __init__(
        self,
        path: Path,
        *,
        parse: Callable[[Any], T],
        default: Callable[[], T],
        salvage: bool = False,
    ) -> None:
        self.path = path
        self._parse = parse
        self._default = default
        self._salvage = salvage
        self._lock_path = path.with_name(f"{path.name}.lock")
        self._mutex = threading.Lock()
        self._pending: list[Change[T]] = []
        self._listeners: list[Warn] = []
        self.warnings: list[str] = []
        """Problems met so far (loading, writing), in order."""
        self.in_memory = False
        """True once writing failed: the store then keeps its value in memory only."""
        self._queued = False
        value, salvaged = self._read(self.warnings.append)
        self.value: T = value
        if salvaged:
            # Written back at once, so the kept entries are on disk again, not only in memory.
            empty = self._default()
            self._enqueue(lambda current: merged(empty, value, current))

    def subscribe(self, listener: Warn) -> None:
        """Be told of problems met from now on, possibly from the writer thread."""
        self._listeners.append(listener)

    def update(self, change: Change[T]) -> None:
        """Apply ``change`` now, and to the file in the background (merged with whatever
        other processes wrote since). A change may modify the value in place and return it;
        it must not keep it."""
        self.value = change(self.value)
        self._enqueue(change)

    def replace(self, value: T) -> None:
        """Make ``value`` the new value, as a change relative to the current one: entries
        added to a list (or keys to an object) are added on disk, entries removed are
        removed, and whatever other processes changed meanwhile is kept."""
        base = copy.deepcopy(self.value)
        mine = copy.deepcopy(value)
        self.update(lambda current: merged(base, mine, current))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every change made so far is written (or given up); True when done in
        time. Blocking: from an event loop, call it in a thread."""
        try:
            barrier = _background().submit(lambda: None)
        except RuntimeError:  # the interpreter is shutting down: writes ran in _enqueue
            return True
        try:
            barrier.result(timeout)
        except TimeoutError:
            return False
        return True

    def _enqueue(self, change: Change[T]) -> None:
        with self._mutex:
            if self.in_memory:
                return
            self._pending.append(change)
            if self._queued:
                return
            self._queued = True
        try:
            _background().submit(self._write_pending)
        except RuntimeError:  # the interpreter is shutting down: write here and now
            self._write_pending()

    # --- reading ---------------------------------------------------------------------------

    def _read(self, warn: Warn) -> tuple[T, bool]:
        """The file's value, and whether it was salvaged from a damaged file. Missing or
        unusable gives the default; a damaged file is moved aside so that the next write
        does not destroy what the user may want back."""
        try:
            text = read_text(self.path)
        except FileNotFoundError:
            return self._default(), False
        except NotADirectoryError:  # nothing to read; the first write says what is wrong
            return self._default(), False
        except JsonFileError as exc:
            warn(f"could not read {exc}; starting without it")
            return self._default(), False
        except OSError as exc:
            warn(f"could not read {self.path}: {exc.strerror or exc}; starting without it")
            return self._default(), False
        try:
            return self._parse(loads(text, self.path)), False
        except ValueError as exc:  # JsonFileError, or the wrong shape
            reason = exc.reason if isinstance(exc, JsonFileError) else str(exc)
            kept = salvage_list(text) if self._salvage else []
            where = self._set_aside()
            saved = f", {len(kept)} readable entries kept" if kept else ", starting fresh"
            warn(f"{self.path} was unreadable ({reason}); {where}{saved}")
            return (self._parse(kept), True) if kept else (self._default(), False)

    def _set_aside(self) -> str:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, aside)
        except OSError:
            return "left in place"
        return f"moved to {aside.name}"

    # --- writing (on the writer thread) --------------------------------------------------------

    def _write_pending(self) -> None:
        with self._mutex:
            changes, self._pending = self._pending, []
            self._queued = False
        if not changes:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                value, _salvaged = self._read(self._warn)
                for change in changes:
                    value = change(value)
                write_atomic(self.path, value)
        except OSError as exc:
            self._give_up(exc)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An advisory lock on a sibling file, held while the file is read, merged and
        replaced; released by the kernel if the process dies."""
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _give_up(self, exc: OSError) -> None:
        with self._mutex:
            self.in_memory = True
            self._pending = []
        why = _why_not_written(self.path, exc)
        self._warn(
            f"cannot save to {self.path.parent} ({why}); what changes now is kept until "
            "bassi exits, then lost"
        )

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        for listener in list(self._listeners):
            listener(message)


def _why_not_written(path: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOTDIR, errno.EEXIST) or (
        path.parent.exists() and not path.parent.is_dir()
    ):
        return f"{path.parent} is not a directory"
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{path.parent} is read-only"
    return exc.strerror or str(exc)


def write_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file and rename it over ``path``: a crash mid-write never
    leaves half a file. The file is created ``0600`` (``mkstemp``), and the rename keeps that."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    write_file_atomic(path, lambda handle: handle.write(text.encode("utf-8")))


def write_file_atomic(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """``write`` fills a temporary file beside ``path``, which is then renamed over it, so a
    reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


_MISSING: Any = object()


def merged(base: Any, mine: Any, theirs: Any) -> Any:
    """Three-way merge of JSON values: what changed from ``base`` to ``mine`` applied to
    ``theirs``. Objects merge key by key; lists merge as ordered sets (entries added on either
    side are kept, entries ``mine`` removed are removed); any other value is ``mine``'s when it
    changed, else ``theirs``'s."""
    if mine == base:
        return theirs
    if isinstance(mine, dict) and isinstance(theirs, dict):
        old = base if isinstance(base, dict) else {}
        out = dict(theirs)
        for key in {*old, *mine}:
            value = merged(old.get(key, _MISSING), mine.get(key, _MISSING), out.get(key, _MISSING))
            if value is _MISSING:
                out.pop(key, None)
            else:
                out[key] = value
        return out
    if isinstance(mine, list) and isinstance(theirs, list):
        before = base if isinstance(base, list) else []
        removed = [x for x in before if x not in mine]
        kept = [x for x in theirs if x not in removed]
        return kept + [x for x in mine if x not in before and x not in kept]
    return mine
