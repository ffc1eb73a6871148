"""Parameter rows from input schemas, as every tool card shows them."""

from __future__ import annotations

from typing import Any

import pytest

from bassi.core.parameters import Parameter, parameters
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
