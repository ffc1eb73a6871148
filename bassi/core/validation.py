"""Every call's arguments are checked against the tool's own input schema before bassi
forwards it.

Many servers validate nothing (raw JSON-RPC servers, thin wrappers around a shell command or
an HTTP API), and a confused or manipulated model can send anything: an agent that runs tools
for people refuses a malformed call itself. The proxy (``bassi.core.bridge``) asks
:meth:`SchemaChecks.refusal` before it forwards a call; an invalid call never reaches the
server, and the model gets each violation with its JSON path and what was expected, and the
tool's parameters, so it can retry in the same turn.

A tool's schema is compiled once per definition (keyed by ``ToolInfo.definition_hash``): the
draft its ``$schema`` names (2020-12 when it names none, as MCP says), checked against that
draft's metaschema, every ``$ref`` resolved and every pattern compiled up front. A schema
that cannot be compiled (an unknown draft, a broken or remote ``$ref``, not a schema of its
draft) does not block its tool: its calls go through unchecked, and the catalog, the card and
``bassi tools show`` say the schema is invalid. The metaschema check of a large schema takes
a good fraction of a second, so it runs away from the event loop: in the background as servers
connect, in a process of its own (``bassi.core.schema_worker``), which says early which
schemas cannot be used; and on a tool's first call, on a thread, which compiles the schema
its arguments are checked against. A check with a compiled schema takes microseconds.

Schemas are untrusted input and arguments are checked on the app's event loop, so nothing
here may hang bassi:

- no remote ``$ref`` is ever fetched (no network at run time): it makes the schema invalid;
- a schema over MAX_SCHEMA_CHARS of JSON or nested deeper than MAX_SCHEMA_DEPTH is not
  compiled (it is reported invalid), which bounds compiling and the metaschema check;
- patterns run on the ``regex`` engine with one time budget per call (PATTERN_SECONDS): a
  pattern that backtracks catastrophically is cut off and the call refused, saying so. The
  one path left to jsonschema's own ``re`` is ``unevaluatedProperties`` matching property
  names against ``patternProperties``;
- arguments nested deeper than MAX_ARGUMENT_DEPTH are refused without checking. With both
  depths bounded, running out of stack can only mean a ``$ref`` that loops, which makes the
  schema invalid from then on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import queue
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any

import jsonschema_specifications
import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for

from bassi.core.parameters import summary, type_of
from bassi.core.safe_text import one_line
from bassi.core.schema_worker import SchemaWorker
from bassi.core.tools import ToolInfo

if TYPE_CHECKING:
    # The MCP library loads only when a call is refused: the catalog (and so ``bassi tools``
    # answering from its cache) imports this module and never needs it (~1 s to import).
    from mcp import types

logger = logging.getLogger(__name__)

MAX_SCHEMA_CHARS = 256_000
"""Five times the largest schema of the benchmark corpus (45 KB)."""
MAX_SCHEMA_DEPTH = 64
"""JSON nesting of a schema (an object property is two levels: ``properties``, its name)."""
MAX_ARGUMENT_DEPTH = 64
PATTERN_SECONDS = 0.25
"""Time all pattern matches of one call may take together."""
VIOLATIONS_SHOWN = 5
VIOLATIONS_COUNTED = 100
CACHE_SIZE = 20_000
"""Compiled schemas kept (least recently used go first)."""
WORKER_BATCH = 64
"""Schemas sent to the background checker at a time: each batch is one JSON line, encoded
while holding the interpreter lock. A server with fewer new schemas than this is checked on
the thread, unless the checker process already runs."""

_NO_NETWORK: referencing.jsonschema.SchemaRegistry = referencing.Registry()
"""Resolves nothing by itself and fetches nothing: jsonschema adds the metaschemas."""
_METASCHEMAS: referencing.jsonschema.SchemaRegistry = jsonschema_specifications.REGISTRY
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """A tool's schema, ready to check arguments, or why it cannot be used."""

    validator: Validator | None
    problem: str | None = None
    """Why the tool's calls go unchecked; None when its schema compiled."""


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    """Where in the arguments, as a JSON path: ``$.items[0].name``."""
    expected: str
    """What the schema wants there, and what it got."""

    def __str__(self) -> str:
        return f"{self.path}: {self.expected}"


class SchemaChecks:
    """Every tool's compiled schema, shared by calls and displays. Safe to use from any
    thread: compiling happens outside the lock, so two threads may compile the same schema
    once each, never wait on each other."""

    def __init__(self, capacity: int = CACHE_SIZE) -> None:
        self._capacity = capacity
        self._compiled: OrderedDict[str, CompiledSchema] = OrderedDict()
        self._verdicts: dict[str, str | None] = {}
        """The background check's findings by definition: the problem, or None if usable."""
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[list[ToolInfo], Callable[[], None]] | None] = (
            queue.SimpleQueue()
        )
        self._worker: threading.Thread | None = None
        self._checker = SchemaWorker()
        self._stopped = threading.Event()

    def known(self, tool: ToolInfo) -> CompiledSchema | None:
        """The compiled schema if it is at hand; never compiles."""
        key = tool.definition_hash
        with self._lock:
            found = self._compiled.get(key)
            if found is not None:
                self._compiled.move_to_end(key)
            return found

    def compiled(self, tool: ToolInfo) -> CompiledSchema:
        """The compiled schema, compiled now if need be (up to a fraction of a second for a
        large schema: off the event loop, use :meth:`ready`)."""
        found = self.known(tool)
        if found is None:
            found = compile_schema(tool.input_schema)
            if found.problem:
                logger.info("%s: calls go unchecked: %s", tool.ref, found.problem)
            self._remember(tool, found)
        return found

    async def ready(self, tool: ToolInfo) -> CompiledSchema:
        """:meth:`compiled`, compiling on a thread so the event loop keeps going."""
        found = self.known(tool)
        if found is not None:
            return found
        return await asyncio.to_thread(self.compiled, tool)

    def problem(self, tool: ToolInfo) -> str | None:
        """Why the tool's calls go unchecked, or None when its schema compiled."""
        found = self.known(tool)
        if found is None:
            with self._lock:
                if tool.definition_hash in self._verdicts:
                    return self._verdicts[tool.definition_hash]
            found = self.compiled(tool)
        return found.problem

    def known_problem(self, tool: ToolInfo) -> str | None:
        """Why the tool's calls go unchecked, if a compile or the background check found
        out; never compiles."""
        found = self.known(tool)
        if found is not None:
            return found.problem
        with self._lock:
            return self._verdicts.get(tool.definition_hash)

    def compile_soon(self, tools: Sequence[ToolInfo], done: Callable[[], None]) -> None:
        """Check ``tools`` in the background, then call ``done`` (on the checker's thread),
        after which :meth:`known_problem` has their verdicts. Jobs run one after another, so
        servers connecting together do not pile up work fighting for the CPU."""
        if self._stopped.is_set():
            return
        self._jobs.put((list(tools), done))
        if self._worker is None:
            self._worker = threading.Thread(
                target=self._work, name="bassi-schema-checks", daemon=True
            )
            self._worker.start()

    def close(self) -> None:
        """Stop the background check (its process at once, its thread after the schema it
        is compiling, if any)."""
        self._stopped.set()
        self._jobs.put(None)
        self._checker.close()

    def violations(self, tool: ToolInfo, arguments: Mapping[str, Any]) -> list[Violation]:
        """What is wrong with ``arguments``, in document order (at most VIOLATIONS_COUNTED);
        empty when they are valid or cannot be checked (the schema is invalid)."""
        return self._violations(tool, self.compiled(tool), arguments)

    async def refusal(
        self, tool: ToolInfo, arguments: Mapping[str, Any]
    ) -> types.CallToolResult | None:
        """The error result the model gets instead of the call, or None to forward it."""
        found = self._violations(tool, await self.ready(tool), arguments)
        if not found:
            return None
        from bassi.core.refusals import refused_result

        return refused_result(refusal_message(tool, found), short_reason(found))

    def _violations(
        self, tool: ToolInfo, compiled: CompiledSchema, arguments: Mapping[str, Any]
    ) -> list[Violation]:
        if compiled.validator is None:
            return []
        if _deeper_than(arguments, MAX_ARGUMENT_DEPTH):
            deep = f"nested more than {MAX_ARGUMENT_DEPTH} levels deep, more than bassi checks"
            return [Violation("$", deep)]
        try:
            errors = _errors(compiled.validator, arguments)
        except RecursionError:
            self._give_up(tool, "a $ref in it loops without end")
            return []
        except Exception as exc:
            self._give_up(tool, f"checking arguments against it failed: {one_line(str(exc))}")
            return []
        root = tool.input_schema
        found = (v for error in errors for v in _describe(error, root))
        return list(dict.fromkeys(found))[:VIOLATIONS_COUNTED]

    def _give_up(self, tool: ToolInfo, problem: str) -> None:
        logger.warning("%s: calls go unchecked from now on: %s", tool.ref, problem)
        self._remember(tool, CompiledSchema(None, problem))

    def _remember(self, tool: ToolInfo, compiled: CompiledSchema) -> None:
        with self._lock:
            self._compiled[tool.definition_hash] = compiled
            self._compiled.move_to_end(tool.definition_hash)
            while len(self._compiled) > self._capacity:
                self._compiled.popitem(last=False)

    def _work(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                tools, done = job
                self._check(tools)
                if self._stopped.is_set():
                    return
                try:
                    done()
                except Exception:
                    logger.exception("after checking schemas")
        finally:
            self._checker.close()

    def _check(self, tools: list[ToolInfo]) -> None:
        """Verdicts for the tools not yet checked, from the worker process; compiled here
        when the worker cannot run (nothing is left unchecked because it failed)."""
        with self._lock:
            seen = set(self._verdicts) | set(self._compiled)
        todo = {t.definition_hash: t for t in tools if t.definition_hash not in seen}
        keys = list(todo)
        if not self._checker.worth_asking(len(keys), WORKER_BATCH):
            # Starting a process costs more than checking a few schemas (bassi's own).
            self._compile_here(list(todo.values()))
            return
        for start in range(0, len(keys), WORKER_BATCH):
            if self._stopped.is_set():
                return
            batch = keys[start : start + WORKER_BATCH]
            try:
                verdicts = self._checker.problems({key: todo[key].input_schema for key in batch})
            except (OSError, ValueError, RecursionError) as exc:  # compiling here handles each
                if self._stopped.is_set():  # close() stopped the process under this call
                    return
                logger.warning("checking schemas here instead: %s", exc)
                self._compile_here([todo[key] for key in keys[start:]])
                return
            for key, problem in verdicts.items():
                if problem:
                    logger.info("%s: calls go unchecked: %s", todo[key].ref, problem)
            with self._lock:
                self._verdicts.update(verdicts)

    def _compile_here(self, tools: list[ToolInfo]) -> None:
        for tool in tools:
            if self._stopped.is_set():
                return
            self.compiled(tool)


def refusal_message(tool: ToolInfo, violations: Sequence[Violation]) -> str:
    """What the model reads: what is wrong, where, and the parameters to get it right."""
    shown = violations[:VIOLATIONS_SHOWN]
    lines = [
        f"{tool.qualified_name} was not run: its arguments do not match the tool's input schema."
    ]
    lines += [f"- {v}" for v in shown]
    left = len(violations) - len(shown)
    if left:
        plus = "+" if len(violations) >= VIOLATIONS_COUNTED else ""
        lines.append(f"- … and {left}{plus} more")
    lines.append(summary(tool))
    lines.append(f"Correct the arguments and call {tool.qualified_name} again.")
    return "\n".join(lines)


def short_reason(violations: Sequence[Violation]) -> str:
    """One line for the chat: the first violation and how many more there are."""
    more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
    return f"invalid arguments: {violations[0]}{more}"


# Compiling


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Compile a tool's input schema, or say why it cannot be used. Never raises."""
    try:
        return _compile(schema)
    except RecursionError:
        return CompiledSchema(None, "it nests too deeply to check")
    except Exception as exc:
        logger.exception("compiling a schema failed")
        return CompiledSchema(None, f"it could not be compiled: {one_line(str(exc))}")


def _compile(schema: Mapping[str, Any]) -> CompiledSchema:
    size = len(json.dumps(schema, ensure_ascii=False, default=str))
    if size > MAX_SCHEMA_CHARS:
        return CompiledSchema(
            None,
            f"it is {size:,} characters of JSON, more than bassi checks ({MAX_SCHEMA_CHARS:,})",
        )
    if _deeper_than(schema, MAX_SCHEMA_DEPTH):
        return CompiledSchema(None, f"it nests more than {MAX_SCHEMA_DEPTH} levels deep")
    dialect = schema.get("$schema", Draft202012Validator.META_SCHEMA["$schema"])
    if not isinstance(dialect, str):
        return CompiledSchema(None, "its $schema is not a string")
    try:
        specification = referencing.jsonschema.specification_with(dialect)
    except referencing.jsonschema.UnknownDialect:
        return CompiledSchema(None, f"its $schema {_show(dialect)} names no draft bassi knows")
    draft = validator_for(schema, default=Draft202012Validator)
    error = best_match(_metaschema_checker(draft).iter_errors(schema))
    if error is not None:
        where = "" if error.json_path == "$" else f" at {one_line(error.json_path, 80)}"
        return CompiledSchema(
            None,
            f"it is not valid JSON Schema ({specification.name}){where}: {one_line(error.message)}",
        )
    resource = specification.create_resource(schema)
    if problem := _unusable_part(resource):
        return CompiledSchema(None, problem)
    validator = _checking_class(draft)(schema, registry=_NO_NETWORK)
    try:
        _errors(validator, {})
    except RecursionError:
        return CompiledSchema(None, "a $ref in it loops without end")
    return CompiledSchema(validator)


@cache
def _metaschema_checker(draft: type[Validator]) -> Validator:
    """Checks a schema against its draft's metaschema, with no format checks: patterns are
    compiled by :func:`_unusable_part`, with the engine that will run them."""
    meta = validator_for(draft.META_SCHEMA, default=draft)
    return meta(draft.META_SCHEMA, registry=_NO_NETWORK)


def _unusable_part(root: referencing.jsonschema.SchemaResource) -> str | None:
    """Why some part of the schema cannot be used (a ``$ref`` that resolves nowhere, a
    pattern that does not compile), or None. Walks every subschema of the draft's keywords,
    in the base URI each one sits in."""
    stack = [(root, _METASCHEMAS.resolver_with_root(root))]
    while stack:
        resource, resolver = stack.pop()
        resolver = resolver.in_subresource(resource)
        contents = resource.contents
        if isinstance(contents, Mapping):
            for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
                ref = contents.get(keyword)
                if not isinstance(ref, str):
                    continue
                try:
                    resolver.lookup(ref)
                except referencing.exceptions.Unresolvable as exc:
                    return f"its {keyword} {_show(ref)} {_unresolved(ref, exc)}"
            patterns = [contents.get("pattern"), *(contents.get("patternProperties") or ())]
            for pattern in patterns:
                if isinstance(pattern, str) and (why := _bad_pattern(pattern)):
                    return f"its pattern {_show(pattern)} is not a regular expression: {why}"
        stack.extend((sub, resolver) for sub in resource.subresources())
    return None


def _unresolved(ref: str, exc: referencing.exceptions.Unresolvable) -> str:
    local = (referencing.exceptions.PointerToNowhere, referencing.exceptions.NoSuchAnchor)
    if isinstance(exc, local) or ref.startswith("#"):
        return "points to nothing in the schema"
    return "is outside the schema, and bassi fetches no remote schemas"


def _bad_pattern(pattern: str) -> str | None:
    try:
        _regex(pattern)
    except regex.error as exc:
        return one_line(str(exc), 80)
    return None


def _deeper_than(value: object, limit: int) -> bool:
    """Whether JSON ``value`` nests more than ``limit`` levels (iteratively: the value may
    be too deep for recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, Mapping):
            children: Iterable[object] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children)
    return False


# Checking, with patterns on a time budget

_deadline: ContextVar[float] = ContextVar("bassi_pattern_deadline", default=math.inf)


class _OutOfTime(Exception):
    pass


class _PatternTimeout(ValidationError):
    """A pattern that could not be matched within the call's budget."""


def _errors(validator: Validator, instance: Any) -> list[ValidationError]:
    """The first VIOLATIONS_COUNTED errors, in document order, all patterns matched within
    one PATTERN_SECONDS budget."""
    token = _deadline.set(time.monotonic() + PATTERN_SECONDS)
    try:
        errors = list(islice(validator.iter_errors(instance), VIOLATIONS_COUNTED))
    finally:
        _deadline.reset(token)
    errors.sort(key=lambda e: [(isinstance(p, str), p) for p in e.absolute_path])
    # Once the budget is spent every later pattern times out too: the first one says it.
    timeouts = [e for e in errors if isinstance(e, _PatternTimeout)]
    return [e for e in errors if not isinstance(e, _PatternTimeout) or e is timeouts[0]]


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _search(pattern: str, text: str) -> bool:
    left = _deadline.get() - time.monotonic()
    if left <= 0:
        raise _OutOfTime
    try:
        found = _regex(pattern).search(text, timeout=None if left == math.inf else left)
    except TimeoutError:
        raise _OutOfTime from None
    return found is not None


def _pattern(
    validator: Any, pattern: Any, instance: Any, _schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string") or not isinstance(pattern, str):
        return
    try:
        matched = _search(pattern, instance)
    except _OutOfTime:
        yield _PatternTimeout(f"could not be matched against {pattern!r} in time")
        return
    if not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, _schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = _search(pattern, key)
            except _OutOfTime:
                yield _PatternTimeout(
                    f"could not be matched against {pattern!r} in time", path=[key]
                )
                return
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """One error per property that is not allowed, at that property's path (jsonschema
    reports them all in one message at the object)."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or ())
    for key, value in instance.items():
        if key in properties:
            continue
        try:
            if any(_search(pattern, key) for pattern in patterns):
                continue
        except _OutOfTime:
            yield _PatternTimeout(
                "could not be matched against the property patterns in time", path=[key]
            )
            return
        if validator.is_type(additional, "object"):
            yield from validator.descend(value, additional, path=key)
        elif additional is False:
            yield ValidationError(f"{key!r} is not allowed", path=[key])


@cache
def _checking_class(draft: type[Validator]) -> type[Validator]:
    checking: type[Validator] = extend(  # type: ignore[no-untyped-call]
        draft,
        validators={
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )
    return checking


# Describing violations


def _describe(error: ValidationError, root: Mapping[str, Any]) -> list[Violation]:
    """``error`` as what the model should fix: where, what was expected, what it sent."""
    path = list(error.absolute_path)
    where = _json_path(path)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if isinstance(error, _PatternTimeout):
        return [Violation(where, f"{error.message}; bassi refuses what it cannot check")]
    if keyword == "required" and isinstance(instance, Mapping) and isinstance(value, list):
        return [
            Violation(_json_path([*path, name]), "required, but missing")
            for name in value
            if isinstance(name, str) and name not in instance
        ]
    if keyword == "additionalProperties" and value is False:
        return [Violation(where, _not_allowed(error.schema))]
    if keyword in ("anyOf", "oneOf") and isinstance(value, list):
        return _alternatives(error, value, root)
    return [Violation(where, _expected(error))]


def _expected(error: ValidationError) -> str:
    keyword, value, instance = error.validator, error.validator_value, error.instance
    got = _got(instance)
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return f"expected {' or '.join(str(k) for k in kinds)}, got {got}"
    if keyword == "enum" and isinstance(value, list):
        return f"expected one of {_choices(value)}, got {got}"
    if keyword == "const":
        return f"expected {_show(value)}, got {got}"
    if keyword in _BOUNDS and _is_number(value):
        return f"expected a number {_BOUNDS[keyword]} {_show(value)}, got {got}"
    if keyword in _SIZES and isinstance(value, int) and isinstance(instance, str | list | dict):
        least, unit = _SIZES[keyword]
        return f"expected {least} {value} {unit}, got {len(instance)}"
    if keyword == "pattern":
        return f"expected a string matching {_show(value)}, got {got}"
    if keyword == "multipleOf":
        return f"expected a multiple of {_show(value)}, got {got}"
    if keyword == "uniqueItems":
        return "expected unique items, got duplicates"
    if keyword == "not":
        return f"must not match {_show(value)}"
    return one_line(error.message, 160)


def _alternatives(
    error: ValidationError, options: list[Any], root: Mapping[str, Any]
) -> list[Violation]:
    """An ``anyOf``/``oneOf`` failure: when some option takes this kind of value (a string
    with a pattern, one of two shapes of an object), what that option wanted; else the kinds
    of value the options take."""
    where = _json_path(list(error.absolute_path))
    if not error.context:
        return [Violation(where, f"matches more than one of the {error.validator} options")]
    best = best_match(e for e in error.context if e.validator != "type")
    if best is not None:
        return _describe(best, root)
    kinds = " | ".join(type_of(o, root) for o in options if isinstance(o, Mapping))
    return [Violation(where, f"expected {kinds}, got {_got(error.instance)}")]


def _not_allowed(schema: Any) -> str:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    names = list(properties) if isinstance(properties, Mapping) else []
    if not names:
        return "not allowed: this object takes no other properties"
    shown = ", ".join(one_line(str(n), 40) for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return f"not allowed: this object takes only {shown}{more}"


_BOUNDS = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "above",
    "exclusiveMaximum": "below",
}
_SIZES = {
    "minLength": ("at least", "characters"),
    "maxLength": ("at most", "characters"),
    "minItems": ("at least", "items"),
    "maxItems": ("at most", "items"),
    "minProperties": ("at least", "properties"),
    "maxProperties": ("at most", "properties"),
}
_JSON_TYPES: list[tuple[type | tuple[type, ...], str]] = [
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (Mapping, "object"),
    (type(None), "null"),
]


def _got(instance: object) -> str:
    """The JSON type of what was sent, with the value when it is short to show."""
    kind = next((name for t, name in _JSON_TYPES if isinstance(instance, t)), "value")
    if kind in ("array", "object", "null"):
        return kind
    return f"{kind} {_show(instance)}"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _choices(values: list[Any]) -> str:
    shown = ", ".join(_show(v, 40) for v in values[:10])
    return shown + (f" (and {len(values) - 10} more)" if len(values) > 10 else "")


def _show(value: object, max_chars: int = 60) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, default=str), max_chars)


def _json_path(path: Sequence[str | int]) -> str:
    parts = ["$"]
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            parts.append(f".{part}")
        else:
            parts.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return one_line("".join(parts), 160)
