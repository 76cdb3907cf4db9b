"""Argument models build their validators on first use, and nothing else changes.

``build_argument_model`` defers pydantic's validator build only for schemas
``builds_cleanly`` vouches for. Held here: a schema it vouches for always builds (so no
failure moves from resolve time to call time), every schema fails at creation exactly as
an eager build does, and deferred and eager models validate alike.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from pydantic import ValidationError

from compiler.runtime.tools import argument_models
from compiler.runtime.tools.argument_models import (
    build_argument_model,
    builds_cleanly,
    unsupported_schema_features,
)

pytestmark = pytest.mark.fastpath

VALUES: list[Any] = [None, 0, 3, -2, 2.5, True, "x", "^[a-z]+$", "^(?=a)a+$", r"(a)\1", "[",
                     r"\d{2,}\Z", [1], {}]
KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
            "maxLength", "pattern", "description", "minItems", "maxItems"]
SAMPLES: list[Any] = [None, 0, 1, 7, -5, 2.5, True, "", "a", "abc", "12", "aa1", [], [1, 2],
                      ["a", "bb"], {"x": 1}]


def _schemas() -> list[dict[str, Any]]:
    """Property schemas: every type with one or two constraints of every kind of value."""
    found = []
    generator = random.Random(5)
    kinds = ["string", "integer", "number", "boolean"]
    for kind, keyword, value in itertools.product(kinds, KEYWORDS, VALUES):
        found.append({"type": kind, keyword: value})
        found.append({"type": "array", "items": {"type": kind, keyword: value}})
        found.append({"type": "array", "items": {"type": kind}, keyword: value})
    for _ in range(600):
        schema: dict[str, Any] = {"type": generator.choice(kinds)}
        for keyword in generator.sample(KEYWORDS, 2):
            schema[keyword] = generator.choice(VALUES)
        found.append(schema)
    return found


def _input_schema(property_schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": property_schema},
            "additionalProperties": False}


def _eager(name: str, schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(argument_models, "builds_cleanly", lambda _schema: False)
        return build_argument_model(name, schema)


def _creation(action: Any) -> tuple[Any, str] | None:
    try:
        action()
    except Exception as error:
        return type(error), str(error).split("\n")[0]
    return None


def _validation(model: Any, value: Any) -> Any:
    try:
        return model.model_validate({"value": value}).model_dump()
    except ValidationError as error:
        return [(detail["loc"], detail["type"]) for detail in error.errors()]


def test_vouched_schemas_build_and_failures_stay_at_creation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vouched = refused = 0
    for schema in map(_input_schema, _schemas()):
        if unsupported_schema_features(schema):
            continue
        eager = _creation(lambda schema=schema: _eager("t", schema, monkeypatch))
        if builds_cleanly(schema):
            vouched += 1
            assert eager is None, schema
        else:
            refused += eager is not None
        assert _creation(lambda schema=schema: build_argument_model("t", schema)) == eager
    assert vouched > 100 and refused > 20


def test_deferred_and_eager_models_validate_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = 0
    for schema in map(_input_schema, _schemas()):
        if unsupported_schema_features(schema) or not builds_cleanly(schema):
            continue
        deferred = build_argument_model("t", schema).model
        assert deferred.__pydantic_complete__ is False
        eager = _eager("t", schema, monkeypatch).model
        for value in SAMPLES:
            assert _validation(deferred, value) == _validation(eager, value), (schema, value)
            compared += 1
        assert deferred.model_json_schema() == eager.model_json_schema()
    assert compared > 1000


def test_a_pattern_pydantic_cannot_run_still_fails_when_the_model_is_made() -> None:
    schema = _input_schema({"type": "string", "pattern": "^(?=a)a+$"})
    # The compiler reports it (unsupported_schema_features), and a manifest that carries
    # it anyway still fails when the model is made, never at the first call.
    assert unsupported_schema_features(schema) != [] and not builds_cleanly(schema)
    with pytest.raises(Exception, match="look-around"):
        build_argument_model("t", schema)
