"""Parameter rows from input schemas, as every tool card shows them."""

from __future__ import annotations

from typing import Any

import pytest

from bassi.core.parameters import Parameter, parameters, summary
from bassi.core.tools import ToolInfo


def rows(schema: Any) -> list[Parameter]:
    return parameters(ToolInfo("s", "t", input_schema=schema))


def test_required_parameters_come_first_with_type_default_and_description() -> None:
    schema = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "default": 10, "description": "How many."},
            "query": {"type": "string", "description": "What to find."},
        },
        "required": ["query"],
    }
    assert rows(schema) == [
        Parameter("query", "string", True, "", "What to find."),
        Parameter("limit", "integer", False, "10", "How many."),
    ]


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": ["string", "null"]}, "string | null"),
        ({"type": "array", "items": {"type": "string"}}, "array[string]"),
        ({"type": "array"}, "array"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "integer | null"),
        ({"enum": ["a", "b"]}, "enum"),
        ({}, "any"),
    ],
)
def test_types_are_short_and_readable(prop: dict[str, Any], expected: str) -> None:
    assert rows({"properties": {"x": prop}})[0].type == expected


def test_enum_choices_join_the_description() -> None:
    [row] = rows({"properties": {"mode": {"enum": ["fast", 2], "description": "Mode."}}})
    assert row.description == 'Mode. (one of: "fast", 2)'


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({}, []),
        ({"properties": []}, []),
        ({"properties": {"x": "string"}, "required": "x"}, [("x", "any", False)]),
    ],
    ids=["empty", "properties-not-object", "property-not-object"],
)
def test_a_malformed_schema_gives_fewer_rows_not_an_error(
    schema: Any, expected: list[tuple[str, str, bool]]
) -> None:
    assert [(r.name, r.type, r.required) for r in rows(schema)] == expected


NESTED = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Shown first.\nSecond line."},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "qty": {"type": "integer", "default": 1},
                    "sku": {"type": "string"},
                },
                "required": ["sku"],
            },
        },
        "owner": {"$ref": "#/$defs/Person", "description": "Who owns it."},
        "reviewer": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
        "tree": {"$ref": "#/$defs/Node"},
    },
    "required": ["items"],
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        "Node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        },
    },
}


def test_nested_objects_arrays_and_refs_are_rows_named_by_their_path() -> None:
    assert [(r.name, r.type, r.required) for r in rows(NESTED)] == [
        ("items", "array[object]", True),
        ("items[].sku", "string", True),
        ("items[].qty", "integer", False),
        ("title", "string", False),
        ("owner", "object", False),
        ("owner.name", "string", True),
        ("reviewer", "object | null", False),
        ("reviewer.name", "string", True),
        ("tree", "object", False),
        ("tree.label", "string", False),
        ("tree.children", "array[object]", False),
    ]
    owner = next(r for r in rows(NESTED) if r.name == "owner")
    assert owner.description == "Who owns it."


def test_the_summary_is_compact_text_for_the_model() -> None:
    text = summary(ToolInfo("s", "t", input_schema=NESTED))
    assert text.splitlines() == [
        "Parameters (* = required):",
        "- items*: array[object]",
        "- items[].sku*: string",
        "- items[].qty: integer = 1",
        "- title: string — Shown first.",
        "- owner: object — Who owns it.",
        "- owner.name*: string",
        "- reviewer: object | null",
        "- reviewer.name*: string",
        "- tree: object",
        "- tree.label: string",
        "- tree.children: array[object]",
    ]
    assert summary(ToolInfo("s", "t")) == "Parameters: none."


def test_a_summary_that_does_not_fit_drops_deep_fields_first_then_cuts() -> None:
    inner = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(5)}}
    schema = {"properties": {f"p{i}": inner for i in range(4)}}
    tool = ToolInfo("s", "t", input_schema=schema)
    assert len(parameters(tool)) == 24
    shallow = summary(tool, max_rows=10).splitlines()
    assert shallow[1:5] == ["- p0: object", "- p1: object", "- p2: object", "- p3: object"]
    assert shallow[-1] == "- (nested fields are not listed)"
    cut = summary(tool, max_rows=2).splitlines()
    assert cut == [
        "Parameters (* = required):",
        "- p0: object",
        "- p1: object",
        "- … more parameters than fit here",
    ]


def test_hostile_names_and_descriptions_are_cleaned_in_the_summary() -> None:
    schema = {"properties": {"x\x1b[31m": {"type": "string", "description": "\x1b]0;t\x07hi"}}}
    assert summary(ToolInfo("s", "t", input_schema=schema)).splitlines()[1] == "- x: string — hi"
