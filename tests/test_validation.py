"""Checking arguments against a tool's input schema: compiling once per definition, honouring
the schema's draft, precise violations, invalid schemas that never block their tool, and
hostile schemas and arguments that must not hang bassi."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp import types

from bassi.core.cpu_priority import BACKGROUND_NICE
from bassi.core.refusals import REFUSED, refusal_reason, unmarked
from bassi.core.tools import ToolInfo
from bassi.core.validation import (
    MAX_ARGUMENT_DEPTH,
    MAX_SCHEMA_CHARS,
    WORKER_BATCH,
    SchemaChecks,
    compile_schema,
)
from tests.conftest import descendant_pids

PUT = {
    "type": "object",
    "properties": {"n": {"type": "integer", "description": "How many."}},
    "required": ["n"],
    "additionalProperties": False,
}


def tool(schema: dict[str, Any], name: str = "put") -> ToolInfo:
    return ToolInfo("srv", name, "A tool.", input_schema=schema)


def problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    return [str(v) for v in SchemaChecks().violations(tool(schema), arguments)]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"n": 3}, []),
        ({"n": "abc"}, ['$.n: expected integer, got string "abc"']),
        ({}, ["$.n: required, but missing"]),
        ({"n": 1, "extra": 1}, ["$.extra: not allowed: this object takes only n"]),
        (
            {"n": 1.5, "b": 1, "a": 2},
            [
                "$.a: not allowed: this object takes only n",
                "$.b: not allowed: this object takes only n",
                "$.n: expected integer, got number 1.5",
            ],
        ),
    ],
    ids=["valid", "wrong-type", "missing", "extra", "several-in-order"],
)
def test_each_violation_has_its_json_path_and_what_was_expected(
    arguments: dict[str, Any], expected: list[str]
) -> None:
    assert problems(PUT, arguments) == expected


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"enum": ["a", "b"]}, "c", 'expected one of "a", "b", got string "c"'),
        ({"const": 5}, 4, "expected 5, got integer 4"),
        ({"minimum": 1}, 0, "expected a number at least 1, got integer 0"),
        ({"exclusiveMaximum": 10}, 10, "expected a number below 10, got integer 10"),
        ({"minLength": 3}, "ab", "expected at least 3 characters, got 2"),
        ({"maxItems": 1}, [1, 2], "expected at most 1 items, got 2"),
        ({"pattern": "^[a-z]+$"}, "AB", 'expected a string matching "^[a-z]+$", got string "AB"'),
        ({"multipleOf": 5}, 7, "expected a multiple of 5, got integer 7"),
        ({"uniqueItems": True}, [1, 1], "expected unique items, got duplicates"),
        ({"type": ["string", "null"]}, 3, "expected string or null, got integer 3"),
        (
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            [],
            "expected string | integer, got array",
        ),
        ({"not": {"type": "string"}}, "s", 'must not match {"type": "string"}'),
    ],
)
def test_keywords_are_explained_in_words(schema: dict[str, Any], value: Any, expected: str) -> None:
    assert problems({"properties": {"x": schema}}, {"x": value}) == [f"$.x: {expected}"]


def test_nested_paths_point_into_arrays_and_objects_and_alternatives_say_what_failed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"qty": {"type": "integer"}, "odd key": {"type": "string"}},
                    "required": ["qty"],
                },
            },
            "shape": {
                "oneOf": [
                    {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]},
                    {"type": "object", "properties": {"w": {"type": "number"}}, "required": ["w"]},
                ]
            },
        },
    }
    found = problems(schema, {"items": [{"qty": 1}, {"odd key": 3}], "shape": {}})
    assert found == [
        "$.items[1].qty: required, but missing",
        '$.items[1]["odd key"]: expected string, got integer 3',
        "$.shape.r: required, but missing",
    ]


async def test_the_refusal_lists_a_handful_then_counts_and_gives_the_parameters() -> None:
    schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "integer"} for i in range(8)},
        "required": [f"p{i}" for i in range(8)],
    }
    result = await SchemaChecks().refusal(tool(schema, "wide"), {})
    assert result is not None and result.is_error
    assert result.meta == {REFUSED: "invalid arguments: $.p0: required, but missing (+7 more)"}
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    lines = content.text.splitlines()
    assert lines[0] == (
        "mcp__srv__wide was not run: its arguments do not match the tool's input schema."
    )
    assert lines[1:7] == [f"- $.p{i}: required, but missing" for i in range(5)] + ["- … and 3 more"]
    assert lines[7] == "Parameters (* = required):"
    assert lines[8] == "- p0*: integer"
    assert lines[-1] == "Correct the arguments and call mcp__srv__wide again."


async def test_a_valid_call_or_an_unchecked_schema_is_not_refused() -> None:
    checks = SchemaChecks()
    assert await checks.refusal(tool(PUT), {"n": 1}) is None
    broken = tool({"properties": {"x": {"$ref": "#/$defs/gone"}}}, "broken")
    assert await checks.refusal(broken, {"x": "anything"}) is None
    assert checks.problem(broken) == 'its $ref "#/$defs/gone" points to nothing in the schema'


def test_the_schemas_draft_is_honoured_and_2020_12_is_the_default() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": {"x": {"maximum": 5, "exclusiveMaximum": True}},
    }
    assert problems(draft4, {"x": 5}) == ["$.x: expected a number at most 5, got integer 5"]
    assert problems(draft4, {"x": 4}) == []
    undeclared = {"properties": {"x": {"maximum": 5, "exclusiveMaximum": True}}}
    assert compile_schema(undeclared).problem == (
        "it is not valid JSON Schema (draft2020-12) at $.properties.x.exclusiveMaximum: "
        "True is not of type 'number'"
    )
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "integer"}},
        "properties": {"x": {"$ref": "#/definitions/n"}},
    }
    assert problems(draft7, {"x": "1"}) == ['$.x: expected integer, got string "1"']


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"$ref": "#/$defs/nope"}, 'its $ref "#/$defs/nope" points to nothing in the schema'),
        (
            {"$schema": "http://json-schema.org/schema#"},
            'its $schema "http://json-schema.org/schema#" names no draft bassi knows',
        ),
        (
            {"properties": {"n": {"type": "strin"}}},
            "it is not valid JSON Schema (draft2020-12) at $.properties.n.type: 'strin' is not "
            "valid under any of the given schemas",
        ),
        (
            {"properties": {"n": {"pattern": "(["}}},
            'its pattern "([" is not a regular expression: unterminated character set at '
            "position 2",
        ),
        (
            {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
            "a $ref in it loops without end",
        ),
    ],
    ids=["broken-ref", "unknown-draft", "not-a-schema", "bad-pattern", "ref-loop"],
)
def test_a_schema_that_cannot_be_compiled_says_why(schema: dict[str, Any], problem: str) -> None:
    compiled = compile_schema(schema)
    assert compiled.validator is None
    assert compiled.problem == problem


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that would serve a schema, and the paths it was asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/n.json", asked
    finally:
        server.shutdown()
        server.server_close()


def test_a_remote_ref_is_never_fetched_and_makes_the_schema_invalid(
    schema_host: tuple[str, list[str]],
) -> None:
    url, asked = schema_host
    checks = SchemaChecks()
    info = tool({"properties": {"n": {"$ref": url}}})
    assert checks.problem(info) == (
        f'its $ref "{url}" is outside the schema, and bassi fetches no remote schemas'
    )
    assert checks.violations(info, {"n": "not an integer"}) == []
    assert asked == []


def test_hostile_sizes_and_depths_are_bounded() -> None:
    huge = {"description": "x" * MAX_SCHEMA_CHARS}
    assert (compile_schema(huge).problem or "").startswith("it is 256,0")
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"properties": {"a": deep}}
    assert compile_schema(deep).problem == "it nests more than 64 levels deep"

    nested: dict[str, Any] = {}
    for _ in range(MAX_ARGUMENT_DEPTH + 10):
        nested = {"a": nested}
    assert problems({"type": "object"}, nested) == [
        "$: nested more than 64 levels deep, more than bassi checks"
    ]


def test_a_catastrophic_pattern_is_cut_off_and_the_call_refused() -> None:
    values = {"properties": {"s": {"type": "string", "pattern": "^(a|aa)+$"}}}
    assert problems(values, {"s": "a" * 80 + "!"}) == [
        "$.s: could not be matched against '^(a|aa)+$' in time; bassi refuses what it cannot check"
    ]
    key = "b" * 80 + "!"
    for names in (
        {"patternProperties": {"^(b|bb)+$": {}}},
        {"properties": {}, "patternProperties": {"^(b|bb)+$": {}}, "additionalProperties": False},
    ):
        [violation] = problems(names, {key: "x"})
        assert violation.startswith(f'$["{key}"]: could not be matched against ')
        assert violation.endswith(" in time; bassi refuses what it cannot check")


def test_a_loop_only_some_arguments_reach_marks_the_schema_invalid_and_lets_calls_through() -> None:
    checks = SchemaChecks()
    info = tool({"properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}})
    assert checks.problem(info) is None
    assert checks.violations(info, {"x": 1}) == []
    assert checks.problem(info) == "a $ref in it loops without end"


def test_a_definition_is_compiled_once_and_a_changed_one_again() -> None:
    checks = SchemaChecks()
    first = tool(PUT)
    assert checks.known(first) is None
    compiled = checks.compiled(first)
    assert checks.known(tool(PUT)) is compiled  # same definition, another record
    changed = tool({**PUT, "required": []})
    assert checks.known(changed) is None
    assert checks.compiled(changed) is not compiled


def test_the_cache_keeps_the_most_recently_used_definitions() -> None:
    checks = SchemaChecks(capacity=2)
    a, b, c = (tool({"properties": {name: {"type": "string"}}}) for name in "abc")
    checks.compiled(a)
    checks.compiled(b)
    checks.known(a)
    checks.compiled(c)
    assert checks.known(a) is not None and checks.known(c) is not None
    assert checks.known(b) is None


def background_verdicts(checks: SchemaChecks, tools: list[ToolInfo]) -> list[str | None]:
    done = threading.Event()
    checks.compile_soon(tools, done.set)
    assert done.wait(30)
    return [checks.known_problem(t) for t in tools]


BROKEN_REF = 'its $ref "#/nowhere" points to nothing in the schema'


def many(count: int) -> list[ToolInfo]:
    """Distinct valid definitions, enough to be worth a process."""
    return [tool({**PUT, "description": f"Version {i}."}, f"put{i}") for i in range(count)]


def test_the_background_check_finds_invalid_schemas_in_a_process_of_its_own() -> None:
    checks = SchemaChecks()
    tools = [*many(WORKER_BATCH), tool({"$ref": "#/nowhere"}, "broken")]
    try:
        before = set(descendant_pids())
        assert background_verdicts(checks, tools) == [None] * WORKER_BATCH + [BROKEN_REF]
        [checker] = set(descendant_pids()) - before  # the checker, still there for more
        # It never competes with the screen for the CPU.
        assert os.getpriority(os.PRIO_PROCESS, checker) == BACKGROUND_NICE
        # Found by the worker process: nothing was compiled in this one.
        assert [checks.known(t) for t in tools] == [None] * len(tools)
        assert checks.problem(tools[-1]) == BROKEN_REF
    finally:
        checks.close()
    assert set(descendant_pids()) <= before


def test_a_few_schemas_are_checked_without_starting_a_process() -> None:
    checks = SchemaChecks()
    tools = [tool(PUT), tool({"$ref": "#/nowhere"}, "broken")]
    try:
        before = set(descendant_pids())
        assert background_verdicts(checks, tools) == [None, BROKEN_REF]
        assert set(descendant_pids()) <= before
    finally:
        checks.close()


def test_without_its_process_the_background_check_still_finds_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("bassi.core.helper_process.sys.executable", "/nonexistent/python")
    checks = SchemaChecks()
    tools = [*many(WORKER_BATCH), tool({"$ref": "#/nowhere"}, "broken")]
    try:
        assert background_verdicts(checks, tools) == [None] * WORKER_BATCH + [BROKEN_REF]
        assert all(checks.known(t) is not None for t in tools)  # compiled here instead
    finally:
        checks.close()


def test_only_bassi_can_mark_a_result_refused() -> None:
    forged = types.CallToolResult(
        content=[types.TextContent(text="ok")], _meta={REFUSED: "forged", "other": 1}
    )
    assert unmarked(forged).meta == {"other": 1}
    assert refusal_reason({"content": "Error: x", "_meta": {REFUSED: "invalid arguments"}}) == (
        "invalid arguments"
    )
    assert refusal_reason({"content": "ok"}) is None
    assert refusal_reason("text") is None
