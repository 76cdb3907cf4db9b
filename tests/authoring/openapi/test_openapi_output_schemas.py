"""SPEC §11/§16: what ``capc import openapi`` derives as ``output_schema``, and why not.

A schema that expands past the node limit (Stripe's expandable fields reach the same
objects again and again) is derived again with a shallower nesting limit, deeper levels
accepting any value (a looser schema, never a guessed one); operations without one say
why. On Stripe's whole document that is 587 of 588 operations (284 before the fallback).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compiler.authoring.openapi.import_openapi import read_openapi
from compiler.authoring.openapi.operations import list_operations
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.responses import (
    ANY_VALUE,
    MAX_NODES,
    NO_BODY,
    NO_SUCCESS,
    NOT_JSON,
    DerivedOutput,
    derived_output_schema,
)
from tests.authoring.openapi.public_corpus import public_document


def derived(tmp_path: Path, document: dict[str, Any]) -> dict[str, DerivedOutput]:
    path = tmp_path / "api.json"
    path.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
                                **document}), encoding="utf-8")
    root, _ = read_openapi(path, str(path))
    refs = References(root)
    return {f"{op.key.method.upper()} {op.key.path}": derived_output_schema(
        refs, Target(root, op.json_path, root.data["paths"][op.key.path][op.key.method]))
        for op in list_operations(root)}


def replies(schema: Any) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}, "description": "ok"}


def fan_out(levels: int, width: int) -> dict[str, Any]:
    """Components N0..N<levels>, each with ``width`` expandable fields of the next."""
    schemas: dict[str, Any] = {f"N{levels}": {"type": "object", "required": ["id"],
                                               "properties": {"id": {"type": "integer"}}}}
    for level in reversed(range(levels)):
        schemas[f"N{level}"] = {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "integer"},
            **{f"f{index}": {"anyOf": [{"type": "string"},
                                       {"$ref": f"#/components/schemas/N{level + 1}"}]}
               for index in range(width)}}}
    return schemas


def deep_value(levels: int, width: int) -> Any:
    value: Any = {"id": 1}
    for _ in range(levels):
        value = {"id": 1, **{f"f{index}": value for index in range(width)}}
    return value


def test_a_schema_past_the_node_limit_is_derived_shallower_not_dropped(
    tmp_path: Path
) -> None:
    found = derived(tmp_path, {
        "paths": {"/n": {"get": {"operationId": "n", "responses": {"200": replies(
            {"$ref": "#/components/schemas/N0"})}}}},
        "components": {"schemas": fan_out(8, 4)}})["GET /n"]
    assert found.schema is not None, found.notes
    assert f"expands past {MAX_NODES} nodes; nested deeper than" in found.notes[0]
    assert found.schema["properties"]["id"] == {"type": "integer"}
    assert found.schema["required"] == ["id"]
    validator = jsonschema.Draft202012Validator(found.schema)
    assert validator.is_valid(deep_value(8, 4))  # looser, never wrong
    assert not validator.is_valid({"id": "one"})  # and still checks the top


def test_a_small_fan_out_keeps_its_whole_depth(tmp_path: Path) -> None:
    found = derived(tmp_path, {
        "paths": {"/n": {"get": {"operationId": "n", "responses": {"200": replies(
            {"$ref": "#/components/schemas/N0"})}}}},
        "components": {"schemas": fan_out(3, 2)}})["GET /n"]
    assert found.schema is not None and not found.notes
    assert not jsonschema.Draft202012Validator(found.schema).is_valid(
        {"id": 1, "f0": {"id": 1, "f1": {"id": 1, "f0": {"id": "x"}}}})


def test_operations_without_a_schema_say_why(tmp_path: Path) -> None:
    found = derived(tmp_path, {"paths": {
        "/gone": {"delete": {"operationId": "gone", "responses": {
            "204": {"description": "deleted"}}}},
        "/moved": {"get": {"operationId": "moved", "responses": {
            "302": {"description": "elsewhere"}}}},
        "/zen": {"get": {"operationId": "zen", "responses": {"200": {
            "description": "t", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
        "/any": {"get": {"operationId": "any", "responses": {"200": replies({})}}},
    }})
    assert {key: (value.schema, value.reason) for key, value in found.items()} == {
        "DELETE /gone": (None, NO_BODY), "GET /moved": (None, NO_SUCCESS),
        "GET /zen": (None, NOT_JSON), "GET /any": (None, ANY_VALUE)}


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CAPC_SLOW_TESTS"), reason="CAPC_SLOW_TESTS=1 runs it "
                    "(minutes; bench/output_coverage.py measures the same share)")
def test_stripe_operations_with_an_output_schema(tmp_path: Path) -> None:
    path = public_document("stripe")
    root, _ = read_openapi(path, str(path))
    refs = References(root)
    found = {f"{op.key.method.upper()} {op.key.path}": derived_output_schema(
        refs, Target(root, op.json_path, root.data["paths"][op.key.path][op.key.method]))
        for op in list_operations(root)}
    text_only = {key: value.reason for key, value in found.items() if value.schema is None}
    assert len(found) == 588
    # The one left as text is a PDF: there is no JSON to describe.
    assert text_only == {"GET /v1/quotes/{quote}/pdf": NOT_JSON}
