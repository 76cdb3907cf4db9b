"""SPEC §11/§16: what ``capc import openapi`` derives as ``output_schema``, and why not.

A schema that expands past the node limit (Stripe's expandable fields reach the same
objects again and again) is derived again with a shallower nesting limit, deeper levels
accepting any value (a looser schema, never a guessed one); operations without one say
why. On Stripe's whole document that is 587 of 588 operations (284 before the fallback).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compiler.authoring.openapi.import_openapi import read_openapi
from compiler.authoring.openapi.operations import list_operations
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.response_memo import Converted, ConvertedParts, Location, Place
from compiler.authoring.openapi.response_size import Measured, fits
from compiler.authoring.openapi.responses import (
    ANY_VALUE,
    MAX_CHARACTERS,
    MAX_NODES,
    NO_BODY,
    NO_SUCCESS,
    NOT_JSON,
    DerivedOutput,
    derived_output_schema,
)
from compiler.runtime.api.output_validation import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_NODES,
    schema_shape_problem,
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


class _NoParts(ConvertedParts):
    """The general path: every part converted anew, nothing kept."""

    def found(self, place: Place, stack: Sequence[Location]) -> Converted | None:
        return None

    def keep(self, place: Place, entry: Converted) -> None:
        return None


def _every_output(root: Any, reuse: bool, paths: tuple[str, ...] = ("/",)
                  ) -> list[DerivedOutput]:
    """The output of each operation under ``paths``, in the document's order."""
    refs = References(root)
    if not reuse:
        refs.converted_parts = _NoParts()
    return [derived_output_schema(refs, Target(
        root, op.json_path, root.data["paths"][op.key.path][op.key.method]))
        for op in list_operations(root) if op.key.path.startswith(paths)]


def _recursive_components() -> dict[str, Any]:
    """A and B refer to each other, C to both under a deep nesting: a part converted
    once under one path meets its own locations under another."""
    ref = lambda name: {"$ref": f"#/components/schemas/{name}"}  # noqa: E731
    return {
        "A": {"type": "object", "properties": {"b": ref("B"), "tags": {
            "type": "array", "items": {"type": "string", "pattern": "(a+)+"}}}},
        "B": {"type": "object", "properties": {"a": ref("A"), "c": ref("C"),
                                               "n": {"type": "integer"}}},
        "C": {"allOf": [ref("D"), {"type": "object", "properties": {
            "d": {"anyOf": [ref("D"), {"type": "null"}]}}}]},
        "D": {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string"}, "more": ref("B"), "deeper": ref("N0")}},
        **fan_out(8, 4)}


# Stripe's operations whose replies expand past the node limit and reach the same
# objects most (its whole document converted anew takes long; bench/ and the
# byte-identical imports cover it whole).
PUBLIC_PATHS = {"github": ("/",), "stripe": ("/v1/customers", "/v1/payment_intents",
                                             "/v1/invoices", "/v1/charges")}


@pytest.fixture(scope="module")
def public_outputs() -> dict[str, tuple[Any, list[DerivedOutput]]]:
    """GitHub's and Stripe's documents read, and their outputs with parts reused."""
    found = {}
    for name, paths in PUBLIC_PATHS.items():
        path = public_document(name)
        root, _ = read_openapi(path, str(path))
        found[name] = (root, _every_output(root, True, paths))
    return found


def test_reused_parts_convert_as_anew(
    tmp_path: Path, public_outputs: dict[str, tuple[Any, list[DerivedOutput]]]
) -> None:
    """Each operation's output (schema, notes, reason) with parts reused across
    operations, attempts and places is what converting every part anew gives: on
    recursive schemas met from each end, past the node limit, and GitHub's and Stripe's
    whole documents."""
    names = ("A", "B", "C", "D", "N0", "N2")
    path = tmp_path / "api.json"
    path.write_text(json.dumps({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {f"/{name}": {"get": {"operationId": name, "responses": {"200": replies(
            {"$ref": f"#/components/schemas/{name}"})}}} for name in names}
        | {"/both": {"get": {"operationId": "both", "responses": {
            "200": replies({"$ref": "#/components/schemas/D"}),
            "201": replies({"$ref": "#/components/schemas/A"})}}}},
        "components": {"schemas": _recursive_components()}}), encoding="utf-8")
    root, _ = read_openapi(path, str(path))
    reused = _every_output(root, reuse=True)
    assert reused == _every_output(root, reuse=False)
    assert any("recursive schema" in note for output in reused for note in output.notes)
    assert any("expands past" in note for output in reused for note in output.notes)
    for name, (root, reused) in public_outputs.items():
        assert reused == _every_output(root, False, PUBLIC_PATHS[name]), name
    assert any("expands past" in note for output in public_outputs["stripe"][1]
               for note in output.notes)


def _shape_and_text_fit(schema: Any, limit: int) -> bool:
    return schema_shape_problem(schema) is None and len(json.dumps(schema)) <= limit


def test_fits_answers_as_the_shape_check_and_json_text(
    public_outputs: dict[str, tuple[Any, list[DerivedOutput]]]
) -> None:
    """response_size.fits against schema_shape_problem and json.dumps: at and around
    each schema's own length, with parts shared and measured before, on GitHub's and
    Stripe's derived schemas and on the edges (depth and node limits, keys json.dumps
    converts, values it refuses)."""
    shared: dict[str, Any] = {"type": "object", "properties": {"é\"\n": {"enum": [
        1, 2.5, True, None, float("nan"), "x\u2028"]}}}
    nested: Any = {"type": "string"}
    for _ in range(MAX_SCHEMA_DEPTH - 1):  # its string at the deepest level allowed
        nested = {"items": nested}
    cases: list[Any] = [
        {}, [], "s", 3, {"anyOf": [shared, shared, {"items": shared}]},
        (shared, [shared]), nested, {"items": nested}, {"a": [nested]},
        {"enum": list(range(MAX_SCHEMA_NODES - 2))}, {"enum": list(range(MAX_SCHEMA_NODES))},
        {"const": {1: "int key", None: [], 2.5: True}}, {"anyOf": [shared] * 700}]
    cases += [output.schema for _, outputs in public_outputs.values() for output in outputs
              if output.schema is not None]
    measured: Measured = {}
    for schema in cases:
        shaped, size = schema_shape_problem(schema) is None, len(json.dumps(schema))
        assert fits(schema, size, measured) == shaped, schema
        assert not fits(schema, size - 1, {})
        assert fits(schema, MAX_CHARACTERS, measured) == (shaped and size <= MAX_CHARACTERS)
    for refused in ({"const": {1, 2}}, {"const": {(1, 2): "tuple key"}}):
        with pytest.raises(TypeError):
            _shape_and_text_fit(refused, MAX_CHARACTERS)
        with pytest.raises(TypeError):
            fits(refused, MAX_CHARACTERS, {})
