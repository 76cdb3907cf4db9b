"""Operations → SPEC §10 options: parameters, styles, bodies, credentials, servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.problems import ImportRefused
from tests.authoring.openapi.helpers import PETSTORE, document, get, mapped, write


@pytest.fixture(scope="module")
def petstore() -> dict[str, Any]:
    return mapped(PETSTORE)


def options(found: dict[str, Any], code: str) -> dict[str, Any]:
    result: dict[str, Any] = found[code]["data"]["options"]
    return result


def test_query_styles_follow_style_and_explode(petstore: dict[str, Any]) -> None:
    params = options(petstore, "list_pets")["params"]
    assert params["tags"]["style"] == "repeat"  # form, explode (the default)
    assert params["ids"]["style"] == "comma"  # form, explode: false
    assert params["filter"]["style"] == "deep_object"
    assert params["filter"]["properties"]["status"]["enum"] == ["available", "sold"]
    assert params["limit"] == {"type": "integer", "default": 20, "minimum": 1, "maximum": 100,
                               "required": False}


def test_credentials_are_placeholders_never_arguments(petstore: dict[str, Any]) -> None:
    listing = options(petstore, "list_pets")
    assert listing["headers"] == {"Authorization": "Bearer ${PET_STORE_BEARER_AUTH}",
                                  "X-Api-Key": "${PET_STORE_X_API_KEY}"}
    assert "X-Api-Key" not in listing["params"]
    admin = options(petstore, "delete_pets_pet_id")
    assert admin["headers"] == {"X-Admin-Key": "${PET_STORE_API_KEY_AUTH}"}
    names = {s.name for s in petstore["delete_pets_pet_id"]["settings"]}
    assert names == {"PET_STORE_API_KEY_AUTH"}


def test_server_variables_are_fixed_and_path_slots_renamed(petstore: dict[str, Any]) -> None:
    shown = options(petstore, "show_pet_by_id")
    assert shown["url"] == "https://eu.pets.example.com/v1/pets/{pet_id}"
    assert shown["path_params"] == {"pet_id": {"type": "string", "required": True}}


def test_json_body_merges_allof_drops_readonly_keeps_nullable(petstore: dict[str, Any]) -> None:
    body = options(petstore, "create_pet")["body"]
    assert "id" not in body  # readOnly
    assert body["name"] == {"type": "string", "max_length": 64, "required": True}
    assert body["tag"] == {"type": "string", "nullable": True}
    assert body["owner"]["type"] == "object" and body["owner"]["nullable"] is True
    notes = petstore["create_pet"]["notes"]
    assert any("oneOf at #/components/schemas/NewPet/allOf/1/properties/owner/oneOf of "
               "object, string kept as its first alternative" in n for n in notes), notes


def test_form_and_multipart_bodies(petstore: dict[str, Any]) -> None:
    form = options(petstore, "create_owner")
    assert form["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert form["body"]["metadata"] == {"type": "object",
                                        "additional_properties": {"type": "string"}}
    assert form["body"]["address"]["properties"] == {"city": {"type": "string"}}
    upload = options(petstore, "upload_photo")
    assert upload["files"] == {"photo": {"description": "The photo", "required": True,
                                         "multiple": False}}
    assert upload["body"] == {"caption": {"type": "string"}}
    assert "Content-Type" not in upload["headers"]


def test_openapi_31_type_arrays_and_anyof_null(tmp_path: Path) -> None:
    data = document({"/a": {"post": {**get("make"), "requestBody": {"content": {
        "application/merge-patch+json": {"schema": {"type": "object", "properties": {
            "a": {"type": ["integer", "null"]},
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "c": {"anyOf": [{"type": "string", "maxLength": 5}, {"enum": [""]}]},
            "d": {"const": "fixed"}}}}}}}}})
    data["openapi"] = "3.1.0"
    made = mapped(write(tmp_path, data))["make"]
    body = made["data"]["options"]["body"]
    assert body["a"] == {"type": "integer", "nullable": True}
    assert body["b"] == {"type": "string", "nullable": True}
    assert body["c"] == {"type": "string", "max_length": 5}
    assert body["d"] == {"type": "string", "enum": ["fixed"]}
    assert any("empty-string alternative" in note for note in made["notes"])


def test_what_cannot_be_said_is_noted_or_skips_the_operation(tmp_path: Path) -> None:
    data = document({
        "/a": {"get": get("optional", parameters=[
            {"name": "ids", "in": "query", "style": "matrix", "explode": False,
             "schema": {"type": "array", "items": {"type": "string"}}},
            {"name": "page[size]", "in": "query", "schema": {"type": "integer"}}])},
        "/b": {"get": get("required", parameters=[
            {"name": "page[size]", "in": "query", "required": True,
             "schema": {"type": "integer"}}])},
        "/c": {"post": {**get("octets"), "requestBody": {"required": True, "content": {
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}}},
        "/d": {"post": {**get("xml"), "requestBody": {"required": True, "content": {
            "application/xml": {"schema": {"type": "object"}}}}}},
    })
    found = mapped(write(tmp_path, data))
    # A name that is not an identifier is an argument sent under the document's name.
    assert options(found, "optional")["params"] == {"page_size": {
        "type": "integer", "wire_name": "page[size]", "required": False}}
    assert options(found, "required")["params"]["page_size"]["wire_name"] == "page[size]"
    notes = " | ".join(found["optional"]["notes"])
    assert "query array 'ids' in style 'matrix' left out" in notes
    assert set(found["__skipped__"]) == {"xml"}
    # A raw body is one string argument, the whole body, with its Content-Type.
    assert options(found, "octets")["body_template"] == "{body}"
    assert options(found, "octets")["headers"] == {"Content-Type": "application/octet-stream"}


def test_form_exploded_query_objects_become_separate_parameters(tmp_path: Path) -> None:
    data = document({"/a": {"get": get("search", parameters=[
        {"name": "filter", "in": "query", "required": True, "schema": {
            "type": "object", "required": ["state"],
            "properties": {"state": {"type": "string"}, "since": {"type": "string"}}}}])}})
    params = options(mapped(write(tmp_path, data)), "search")["params"]
    assert params == {"state": {"type": "string", "required": True},
                      "since": {"type": "string", "required": False}}


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080", "http://10.0.0.5/api",
                                 "http://169.254.169.254/latest", "http://[::1]/"])
def test_a_server_on_a_private_address_is_refused_located(tmp_path: Path, url: str) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("a")}}, servers=[{"url": url}]))
    with pytest.raises(ImportRefused) as refused:
        mapped(spec)
    (problem,) = refused.value.diagnostics
    assert problem.code == "url-private-address"
    assert (problem.line, problem.col) == (
        next(n for n, line in enumerate(spec.read_text().splitlines(), 1) if url in line),
        problem.col)


def test_descriptions_lose_control_and_bidi_characters(tmp_path: Path) -> None:
    data = document({"/a": {"get": get("a", summary="List\u202e things\x07",
                                       description="Long\n\n\n\ntext\u200b here")}})
    description = options(mapped(write(tmp_path, data)), "a")["description"]
    assert description == "List things\n\nLong\n\ntext here"
