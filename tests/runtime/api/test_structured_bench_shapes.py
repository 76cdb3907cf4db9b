"""Figures 10a and 10b compare like with like: the same shape and the same bytes."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlencode

from bench.structured_figures import (
    flattened_pairs,
    form_fields,
    hand_written_source,
    nested_arguments,
    nested_schema,
)
from compiler.runtime.api.encoding import form_body
from compiler.runtime.tools.argument_models import build_argument_model


def _count(schema: dict[str, Any]) -> int:
    properties = schema.get("properties", {})
    return len(properties) + sum(_count(child) for child in properties.values())


def test_the_generated_and_hand_written_models_have_the_same_shape_and_output() -> None:
    schema, arguments = nested_schema(), nested_arguments()
    assert _count(schema) == 50
    namespace: dict[str, Any] = {}
    exec(compile(hand_written_source(), "<hand-written>", "exec", dont_inherit=True), namespace)
    by_hand = namespace["Level3"].model_validate(arguments).model_dump()
    model = build_argument_model("bench_tool", schema)
    validated = model.model.model_validate(arguments)
    generated = model.arguments({name: getattr(validated, name)
                                 for name in type(validated).model_fields})
    assert generated == by_hand == arguments


def test_the_form_body_and_the_urlencoded_pairs_carry_the_same_1000_leaves() -> None:
    fields = form_fields()
    pairs = flattened_pairs(fields)
    assert len(pairs) == 1000
    ours = form_body(fields).decode()
    theirs = urlencode(pairs)
    assert ours.count("&") == theirs.count("&") == 999
    assert unquote(ours) == unquote(theirs)
