"""The output-schema check's shortcut (jsonschema-rs's meta-schema verdict) says "valid"
only where jsonschema, the reference, does too."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from compiler.output_shaping import _surely_valid

SCHEMAS: list[Any] = [
    {"type": "object", "properties": {"id": {"type": "integer"}}},
    {"type": ["string", "null"], "maxLength": 3},
    {"type": 5},
    {"type": "strnig"},
    {"properties": []},
    {"required": "id"},
    {"items": {"type": "array", "items": False}},
    {"minItems": -1},
    {"pattern": 7},
    {"enum": []},
    {"anyOf": []},
    {"$ref": 3},
    {"additionalProperties": {"type": "object", "additionalProperties": {"minimum": "x"}}},
    True,
    False,
    "object",
    [],
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
]


@pytest.mark.fastpath
@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_shortcut_never_calls_an_invalid_schema_valid(schema: Any) -> None:
    reference = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    valid = next(iter(reference.iter_errors(schema)), None) is None
    if _surely_valid(schema):
        assert valid
    pytest.importorskip("jsonschema_rs")
    if valid and not (isinstance(schema, dict) and "$schema" in schema):
        assert _surely_valid(schema)  # the shortcut takes what it should
