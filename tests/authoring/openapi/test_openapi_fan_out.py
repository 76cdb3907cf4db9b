"""Schemas that fan out through references (Microsoft Graph's entities: 120 properties, half
of them navigation properties to other entities) are walked again with references followed
less deep, and what was cut is said; the null alternative OpenAPI 3.0 conversions write as
``{type: object, nullable: true}`` is read as ``nullable``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi import schemas
from compiler.build import build
from compiler.compile_result import CompileOptions
from tests.authoring.openapi.helpers import (
    document,
    generated,
    get,
    imported,
    mapped,
    messages,
    write,
)

ENTITIES = 12


def _entity(index: int) -> dict[str, Any]:
    """An entity: scalar fields, a complex field, and navigation properties to every
    other entity (each as an array of it), as Graph's documents write them."""
    properties: dict[str, Any] = {f"field{n}": {"type": "string"} for n in range(20)}
    properties["address"] = {"anyOf": [{"$ref": "#/components/schemas/address"},
                                       {"type": "object", "nullable": True}]}
    for other in range(ENTITIES):
        properties[f"related{other}"] = {
            "type": "array", "x-ms-navigationProperty": True,
            "items": {"$ref": f"#/components/schemas/entity{other}"}}
    return {"type": "object", "properties": properties, "required": ["field0"]}


def fanning_document() -> dict[str, Any]:
    schemas: dict[str, Any] = {f"entity{n}": _entity(n) for n in range(ENTITIES)}
    schemas["address"] = {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}}}
    operation = {"operationId": "create_entity", "responses": {"201": {"description": "ok"}},
                 "requestBody": {"required": True, "content": {"application/json": {
                     "schema": {"$ref": "#/components/schemas/entity0"}}}}}
    return document({"/entities": {"post": operation}}, components={"schemas": schemas})


def test_a_fanning_body_is_imported_with_references_followed_less_deep(
        tmp_path: Path) -> None:
    spec = write(tmp_path / "spec", fanning_document())
    out = tmp_path / "capabilities" / "api"
    outcome = imported(spec, out)
    assert outcome.exit_code == 0, messages(outcome)
    assert [d for d in outcome.diagnostics if d.code == "openapi-skipped"] == []
    body = generated(out, "create_entity")["options"]["body"]
    assert body["field0"] == {"type": "string", "required": True}
    assert body["address"]["properties"] == {"street": {"type": "string"},
                                             "city": {"type": "string"}}
    assert not any(name.startswith("related") for name in body)  # navigation: left out
    text = (out / "create_entity.yaml").read_text(encoding="utf-8")
    comments = " ".join(line.lstrip("# ").strip() for line in text.splitlines()
                        if line.startswith("#"))  # wrapped at 100 columns
    assert "the schemas fan out past 5000 nodes; references followed 3 deep, " \
           f"{ENTITIES} optional navigation properties left out" in comments
    result = build([str(out)], options=CompileOptions(strict=True), cwd=tmp_path,
                   use_cache=False)
    assert result.manifest is not None and not result.diagnostics, result.diagnostics


def test_a_required_object_past_the_depth_is_offered_empty_an_optional_one_left_out(
        tmp_path: Path) -> None:
    """Without navigation marks, references are followed fewer levels; an optional object
    reached past the depth is left out, a required one kept (as an empty object)."""
    data = fanning_document()
    for name, schema in data["components"]["schemas"].items():
        if name.startswith("entity"):
            for field in schema["properties"].values():
                field.pop("x-ms-navigationProperty", None)
            schema["required"] = ["field0", "related1"]
    spec = write(tmp_path, data)
    found = mapped(spec)
    assert found["__skipped__"] == {}
    body = found["create_entity"]["data"]["options"]["body"]
    notes = found["create_entity"]["notes"]
    assert any("references followed 2 deep" in note for note in notes), notes
    # Two levels: entity2 (one reference down) is expanded; what it refers to is not: its
    # required related1 is offered as an empty object, its optional related3 left out.
    nested = body["related2"]["items"]["properties"]
    assert nested["field0"] == {"type": "string", "required": True}
    assert nested["related1"]["items"] == {"type": "object", "description": "(not expanded)"}
    assert nested["related1"]["required"] is True
    assert "related3" not in nested
    assert "body.related2[].related3[]: #/components/schemas/entity3 not expanded " \
           "(references followed 2 deep)" in notes


def test_a_reference_bomb_is_still_skipped_located(tmp_path: Path) -> None:
    """Fan-out that one level of references cannot hold: the operation is skipped."""
    schemas: dict[str, Any] = {"leaf": {"type": "object", "properties": {
        f"f{n}": {"type": "string"} for n in range(6000)}}}
    operation = {"operationId": "bomb", "responses": {"200": {"description": "ok"}},
                 "requestBody": {"content": {"application/json": {
                     "schema": {"$ref": "#/components/schemas/leaf"}}}}}
    spec = write(tmp_path, document({"/b": {"post": operation}, "/c": {"get": get("fine")}},
                                    components={"schemas": schemas}))
    found = mapped(spec)
    # The "openapi-expansion" refusal of the operation, reported as its skip reason.
    assert "expand past 5000 nodes" in found["__skipped__"]["bomb"]


def _shared_body_document(operations: int, padding: int) -> dict[str, Any]:
    """``operations`` POSTs whose bodies each expand one shared schema (about 6,000
    characters of arguments each); ``padding`` characters of description elsewhere."""
    shared = {"type": "object", "properties": {
        f"field{n}": {"type": "string", "description": f"field {n} " + "word " * 20}
        for n in range(50)}}
    paths = {f"/items{n:02d}": {"post": {
        "operationId": f"create{n:02d}", "responses": {"201": {"description": "ok"}},
        "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/shared"}}}}}} for n in range(operations)}
    data = document(paths, components={"schemas": {"shared": shared}})
    data["info"]["description"] = "x" * padding
    return data


def test_the_whole_import_is_bounded_by_the_document_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an import makes stays linear in the document: past so many characters per
    character of the document, the operations left are skipped, each saying why and what to
    do; a larger document (the same operations) is given a larger bound."""
    monkeypatch.setattr(schemas, "MIN_TOTAL_CHARACTERS", 1_000)
    small = mapped(write(tmp_path / "small", _shared_body_document(30, 0)))
    skipped = small["__skipped__"]
    made = sorted(code for code in small if code != "__skipped__")
    assert 0 < len(made) < 30 and len(made) + len(skipped) == 30
    assert made == [f"create{n:02d}" for n in range(len(made))]  # the first ones, in order
    assert all("the import's bounds are spent" in reason and "--operations" in reason
               for reason in skipped.values())
    padded = mapped(write(tmp_path / "padded", _shared_body_document(30, 200_000)))
    assert padded["__skipped__"] == {}
    assert len(padded) - 1 == 30


def test_the_null_alternative_of_a_converted_document_is_nullable(tmp_path: Path) -> None:
    schemas = {"profile": {"type": "object", "properties": {"password": {"type": "string"}}}}
    operation = {"operationId": "update", "responses": {"200": {"description": "ok"}},
                 "requestBody": {"content": {"application/json": {"schema": {
                     "type": "object", "properties": {"profile": {"anyOf": [
                         {"$ref": "#/components/schemas/profile"},
                         {"type": "object", "nullable": True}]}}}}}}}
    spec = write(tmp_path, document({"/u": {"patch": operation}},
                                    components={"schemas": schemas}))
    found = mapped(spec)
    profile = found["update"]["data"]["options"]["body"]["profile"]
    assert profile == {"type": "object", "nullable": True,
                       "properties": {"password": {"type": "string"}}}
    assert found["update"]["notes"] == ()
