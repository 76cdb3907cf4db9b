"""``$ref``: followed inside the document and its folder, refused elsewhere, located;
cycles cut and reported; reference bombs bounded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.authoring.openapi.helpers import (
    document,
    generated,
    imported,
    mapped,
    messages,
    write,
)


def post_with_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"/a": {"post": {"operationId": "make", "responses": {"200": {"description": "ok"}},
                            "requestBody": {"content": {"application/json": {
                                "schema": schema}}}}}}


def test_relative_file_refs_under_the_folder_are_followed(tmp_path: Path) -> None:
    write(tmp_path / "spec" / "schemas", {"Thing": {"type": "object", "properties": {
        "name": {"type": "string", "description": "from the other file"}}}}, "things.yaml")
    spec = write(tmp_path / "spec", document(post_with_body(
        {"$ref": "schemas/things.yaml#/Thing"})))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    body = generated(tmp_path / "out", "make")["options"]["body"]
    assert body == {"name": {"type": "string", "description": "from the other file"}}


@pytest.mark.parametrize(("reference", "code"), [
    ("https://example.com/schemas.yaml#/Thing", "openapi-ref-remote"),
    ("//example.com/schemas.yaml", "openapi-ref-remote"),
    ("file:///etc/passwd", "openapi-ref-remote"),
    ("/etc/passwd", "openapi-ref-absolute"),
    ("../outside.yaml#/Thing", "openapi-ref-outside"),
    ("sub/../../outside.yaml", "openapi-ref-outside"),
    ("#/components/schemas/Missing", "openapi-ref-missing"),
])
def test_refs_that_leave_the_document_are_refused_where_written(
        tmp_path: Path, reference: str, code: str) -> None:
    write(tmp_path, {"Thing": {"type": "string"}}, "outside.yaml")
    spec = write(tmp_path / "spec", document(post_with_body({"$ref": reference})))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    found = messages(outcome)
    assert f" {code} " in found, found
    line = next(number for number, text in enumerate(spec.read_text().splitlines(), 1)
                if reference in text)
    assert f"api.yaml:{line}:" in found
    assert not (tmp_path / "out").exists()


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"Thing": {"type": "string"}}, "secret.yaml")
    (tmp_path / "spec").mkdir()
    os.symlink(tmp_path / "secret.yaml", tmp_path / "spec" / "link.yaml")
    spec = write(tmp_path / "spec", document(post_with_body({"$ref": "link.yaml#/Thing"})))
    assert "openapi-ref-outside" in messages(imported(spec, tmp_path / "out"))


def test_a_ref_chain_loop_is_refused(tmp_path: Path) -> None:
    data = document(post_with_body({"$ref": "#/components/schemas/A"}),
                    components={"schemas": {"A": {"$ref": "#/components/schemas/B"},
                                            "B": {"$ref": "#/components/schemas/A"}}})
    outcome = imported(write(tmp_path, data), tmp_path / "out")
    assert "openapi-ref-loop" in messages(outcome)


def test_recursive_schemas_are_cut_at_depth_one_and_reported(tmp_path: Path) -> None:
    node = {"type": "object", "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
    data = document(post_with_body({"$ref": "#/components/schemas/Node"}),
                    components={"schemas": {"Node": node}})
    made = mapped(write(tmp_path, data))["make"]
    body = made["data"]["options"]["body"]
    assert body["children"]["items"]["type"] == "object"
    assert "properties" not in body["children"]["items"]
    assert "body.children[]: recursive schema #/components/schemas/Node cut at depth 1" \
        in made["notes"]


def test_a_cycle_through_allof_is_cut_and_reported(tmp_path: Path) -> None:
    def part(name: str, kind: str) -> dict[str, Any]:
        return {"type": "object", "properties": {name: {"type": kind}}}

    data = document(post_with_body({"$ref": "#/components/schemas/A"}), components={
        "schemas": {"A": {"allOf": [{"$ref": "#/components/schemas/B"}, part("a", "string")]},
                    "B": {"allOf": [{"$ref": "#/components/schemas/A"}, part("b", "integer")]}}})
    spec = write(tmp_path, data)
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    body = generated(tmp_path / "out", "make")["options"]["body"]
    assert set(body) == {"a", "b"}
    assert "allOf refers back to" in (tmp_path / "out" / "make.yaml").read_text()


def ref_bomb(levels: int, width: int = 10) -> dict[str, Any]:
    """Schema L0 refers to L1 ``width`` times, L1 to L2...: width**levels when expanded."""
    schemas: dict[str, Any] = {f"L{levels}": {"type": "string"}}
    for level in range(levels):
        schemas[f"L{level}"] = {"type": "object", "properties": {
            f"p{i}": {"$ref": f"#/components/schemas/L{level + 1}"} for i in range(width)}}
    return document(post_with_body({"$ref": "#/components/schemas/L0"}),
                    components={"schemas": schemas})


def test_a_ref_bomb_is_cut_to_the_references_that_fit_and_said(tmp_path: Path) -> None:
    spec = write(tmp_path, ref_bomb(30), "bomb.json")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    text = (tmp_path / "out" / "make.yaml").read_text()
    assert "the schemas fan out past 5000 nodes; references followed 3 deep" in text


def test_percent_encoded_pointers_are_followed(tmp_path: Path) -> None:
    """DigitalOcean's and Codat's documents refer to ``#/paths/~1keys~1%7Bid%7D/...``."""
    parameter = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    paths = {
        "/keys/{id}": {"get": {"operationId": "get_key", "parameters": [parameter],
                               "responses": {"200": {"description": "ok"}}}},
        "/keys/{id}/more": {"get": {
            "operationId": "get_more", "responses": {"200": {"description": "ok"}},
            "parameters": [{"$ref": "#/paths/~1keys~1%7Bid%7D/get/parameters/0"}]}},
    }
    spec = write(tmp_path / "spec", document(paths))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    options = generated(tmp_path / "out", "get_more")["options"]
    assert options["url"] == "https://api.example.com/keys/{id}/more"
    assert options["path_params"]["id"]["type"] == "string"
