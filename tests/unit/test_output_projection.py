"""SPEC §16: every shaped reply of a reply that fits the declared schema fits the exposed
(shaped) schema, for every shaping option, cuts included.

Replies are generated from generated schemas; each goes through the runtime's real
shaping (``shape_structured``: every ``select`` form, ``max_items``, ``max_chars``, the byte
cap, and their combinations) and must come back structured and valid (or, cut, as text
with the cut note, never a mismatch), checked twice:
by the runtime's own validator and by the reference ``jsonschema`` implementation, which
also checks the runtime validator agrees with it on values that do not fit.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.output_shaping import shaped_output_schema
from compiler.runtime.api.output import CUT_NOTE, OutputContract
from compiler.runtime.api.output_validation import validate_output
from compiler.runtime.api.shaping import ResponseShaping, shape_structured
from compiler.runtime.redaction import CutText, Redactor

NAMES = ("a", "b", "c")
SCALARS: list[dict[str, Any]] = [
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"},
    {"type": "null"}, {"type": ["string", "null"]}, {"enum": ["x", "y", 3]},
    {"type": "string", "pattern": "^[a-c]+$", "maxLength": 5}, {"const": "k"},
    {"type": "integer", "minimum": 0, "maximum": 9},
]


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    """Declared output schemas: objects, arrays, unions and scalars, a few levels deep."""
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        objects = st.builds(
            lambda properties, required, closed: {
                "type": "object", "properties": properties,
                "required": sorted(set(required) & set(properties)),
                **({"additionalProperties": False} if closed else {})},
            st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
            st.lists(st.sampled_from(NAMES), max_size=3), st.booleans())
        arrays = st.builds(lambda items, least: {"type": "array", "items": items,
                                                 **({"minItems": least} if least else {})},
                           inner, st.integers(0, 2))
        unions = st.builds(lambda left, right: {"anyOf": [left, right]}, inner, inner)
        nullable = st.builds(lambda part: {"anyOf": [part, {"type": "null"}]}, inner)
        return st.one_of(objects, arrays, unions, nullable)

    return st.recursive(st.sampled_from(SCALARS), extend, max_leaves=8)


def values(schema: Any) -> st.SearchStrategy[Any]:
    """Values that fit ``schema`` (the generated subset)."""
    if "anyOf" in schema:
        return st.one_of(*[values(part) for part in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if isinstance(kind, list):
        return st.one_of(*[values({**schema, "type": name}) for name in kind])
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        fixed = {name: values(sub) for name, sub in properties.items() if name in required}
        optional = {name: values(sub) for name, sub in properties.items()
                    if name not in required}
        extra = (st.just({}) if schema.get("additionalProperties") is False else
                 st.dictionaries(st.sampled_from(["x", "y"]), st.integers(), max_size=2))
        return st.builds(lambda a, b, c: {**c, **b, **a}, st.fixed_dictionaries(fixed),
                         st.fixed_dictionaries({}, optional=optional), extra)
    if kind == "array":
        return st.lists(values(schema["items"]), min_size=schema.get("minItems", 0),
                        max_size=4)
    return {
        "string": st.from_regex(r"[a-c]{1,5}", fullmatch=True) if "pattern" in schema
        else st.text(max_size=6),
        "integer": st.integers(schema.get("minimum", -10**6), schema.get("maximum", 10**6)),
        "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
        "boolean": st.booleans(), "null": st.none(),
    }[kind]


SELECTS = [None, "a", "a.b", "a[0]", "a[-1]", "a[1:]", "a[*].b", "a[].b", "[a, b]",
           "{x: a, y: b.c}", "*.a", "a[?b].c", "@", "a | b", "a[]", "a[].c[]", "b[*]",
           "length(@)", "a || b", "[a, b][0]", "keys(@)", "a[::2].c", "values(@)[0]",
           "map(&a, @)", "not_null(a, b)", "a == b", "!a", "a[?b == `1`] | [0]"]
SHAPINGS = [{}, {"max_items": 1}, {"max_items": 2}, {"max_chars": 40},
            {"max_items": 1, "max_chars": 60}, {"max_items": 2, "max_chars": 4000}]


def _shaped(declared: Any, response: dict[str, Any]) -> Any:
    return shaped_output_schema({"output_schema": declared, "response": response}).schema


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), declared=schemas(), select=st.sampled_from(SELECTS),
       shaping=st.sampled_from(SHAPINGS), byte_cap=st.sampled_from([None, 8, 30]))
def test_every_shaped_reply_fits_the_exposed_schema(
    data: st.DataObject, declared: dict[str, Any], select: str | None,
    shaping: dict[str, Any], byte_cap: int | None
) -> None:
    response = {**shaping, **({"select": select} if select else {})}
    shaped = _shaped(declared, response)
    if shaped is None:  # the compiler could not follow: the tool returns text only
        return
    jsonschema.Draft202012Validator.check_schema(shaped)
    reply = data.draw(values(declared))
    contract = OutputContract("t", shaped)
    body = json.dumps(reply)
    # The byte cap (max_response_bytes): the body arrives cut, as the transport cuts it.
    arrived_cut = byte_cap is not None and len(body) > byte_cap
    text = body[:byte_cap] if arrived_cut else body
    try:
        result = shape_structured(Redactor(), CutText(text, arrived_cut, len(body)),
                                  ResponseShaping.from_manifest(response or None), contract)
    except Exception as error:  # a JMESPath type error: the tool reports it, as before
        assert type(error).__name__ == "JMESPathTypeError", error
        return
    if result.structured:
        jsonschema.validate(result.value, shaped)
        shown = result.text.split("\n\n")[0]
        # The text is the value's JSON (a selected string is shown as it is).
        assert (isinstance(result.value, str) and shown == result.value) or (
            json.loads(shown) == result.value)
    else:  # only a cut reply may be text only; never a mismatch
        assert CUT_NOTE in result.text, result.text
        assert "max_chars" in shaping or arrived_cut


@settings(max_examples=300, deadline=None)
@given(data=st.data(), schema=schemas(), other=schemas())
def test_the_runtime_validator_agrees_with_jsonschema(
    data: st.DataObject, schema: dict[str, Any], other: dict[str, Any]
) -> None:
    value = data.draw(st.one_of(values(schema), values(other)))
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert validate_output(schema, value, len(json.dumps(value))).valid == expected


@pytest.mark.parametrize(("select", "declared", "expected"), [
    # a required field of an object is never null; an optional one may be missing
    ("a", {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}},
     {"type": "integer"}),
    ("a", {"type": "object", "properties": {"a": {"type": "integer"}}},
     {"type": ["integer", "null"]}),
    # a projection drops null results, so the items are never null
    ("a[*].b", {"type": "object", "required": ["a"], "properties": {"a": {
        "type": "array", "items": {"type": "object", "properties": {"b": {"type": "string"}}}}}},
     {"type": "array", "items": {"type": "string"}}),
    # an index may be out of range
    ("[0]", {"type": "array", "items": {"type": "integer"}}, {"type": ["integer", "null"]}),
    ("{n: a}", {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}},
     {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
      "additionalProperties": False}),
])
def test_projected_schemas(select: str, declared: Any, expected: Any) -> None:
    assert _shaped(declared, {"select": select}) == expected


def test_max_items_becomes_max_items_at_every_depth() -> None:
    declared = {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
    assert _shaped(declared, {"max_items": 3}) == {
        "type": "array", "maxItems": 3,
        "items": {"type": "array", "maxItems": 3, "items": {"type": "integer"}}}


@pytest.mark.parametrize(("declared", "select"), [
    ({"type": "object"}, "sort_by(@, &a) | custom(@)"),
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}, "a"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{}]}, "a"),
])
def test_what_the_compiler_cannot_follow_is_dropped(declared: Any, select: str) -> None:
    outcome = shaped_output_schema({"output_schema": declared,
                                    "response": {"select": select}})
    assert outcome.schema is None
    assert [p.code.id for p in outcome.problems] == ["api-output-schema-dropped"]
    assert outcome.problems[0].path == ("options", "response", "select")
