"""Shapes the public documents have (GitHub's, Stripe's, Kubernetes'), each in a few lines:
what the corpus tests found the importer getting wrong, kept as the class of problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.problems import ImportRefused
from tests.authoring.openapi.helpers import document, get, mapped, write

FORM = "application/x-www-form-urlencoded"
EMPTY_FORM = {"content": {FORM: {"encoding": {}, "schema": {
    "type": "object", "properties": {}, "additionalProperties": False}}}, "required": False}


def _options(found: dict[str, Any], code: str) -> dict[str, Any]:
    result: dict[str, Any] = found[code]["data"]["options"]
    return result


def test_a_body_that_can_only_be_empty_is_ignored_on_any_method(tmp_path: Path) -> None:
    """Stripe declares `{}` form bodies on its GETs and DELETEs: nothing to send, nothing
    lost, so no note and no skipped operation."""
    data = document({"/v1/customers/{id}": {
        "parameters": [{"name": "id", "in": "path", "required": True,
                        "schema": {"type": "string"}}],
        "get": get("GetCustomer", requestBody=EMPTY_FORM),
        "delete": get("DeleteCustomer", requestBody=EMPTY_FORM)}})
    found = mapped(write(tmp_path, data))
    assert found["__skipped__"] == {}
    for code in ("get_customer", "delete_customer"):
        assert "body" not in _options(found, code)
        assert "headers" not in _options(found, code)  # no form Content-Type either
        assert found[code]["notes"] == ()


def test_a_get_body_is_left_out_when_optional_and_skips_when_required(tmp_path: Path
                                                                     ) -> None:
    def body(required: bool) -> dict[str, Any]:
        return {"required": required, "content": {"application/json": {"schema": {
            "type": "object", "properties": {"q": {"type": "string"}}}}}}

    data = document({"/a": {"get": get("optional", requestBody=body(False))},
                     "/b": {"get": get("required", requestBody=body(True))}})
    found = mapped(write(tmp_path, data))
    assert "body" not in _options(found, "optional")
    assert any("request body on GET" in note for note in found["optional"]["notes"])
    assert "request body on GET" in found["__skipped__"]["required"]


@pytest.mark.parametrize("method", ["head", "options", "trace"])
def test_methods_an_api_tool_cannot_send_are_skipped_with_the_reason(
        tmp_path: Path, method: str) -> None:
    """Kubernetes' proxy operations declare HEAD and OPTIONS; the tree must still compile."""
    data = document({"/proxy": {"get": get("proxyGet"), method: get("proxyOther")}})
    found = mapped(write(tmp_path, data))
    assert set(found) == {"proxy_get", "__skipped__"}
    assert method.upper() in found["__skipped__"]["proxy_other"]


def test_one_name_in_two_places_keeps_the_required_one(tmp_path: Path) -> None:
    """Kubernetes: `{path}` in the path and an optional `?path=`, written query first;
    `dryRun` in the query and in the DeleteOptions body. GitHub: `name` in the path and
    an optional body field. The optional second use is left out, with a note."""
    data = document({"/pods/{name}/proxy/{path}": {
        "parameters": [{"name": "path", "in": "query", "schema": {"type": "string"}},
                       {"name": "name", "in": "path", "required": True,
                        "schema": {"type": "string"}},
                       {"name": "path", "in": "path", "required": True,
                        "schema": {"type": "string"}},
                       {"name": "dryRun", "in": "query", "schema": {"type": "string"}}],
        "delete": {**get("deletePod"), "requestBody": {"content": {"application/json": {
            "schema": {"type": "object", "properties": {
                "dryRun": {"type": "array", "items": {"type": "string"}},
                "name": {"type": "string"},
                "gracePeriodSeconds": {"type": "integer"}}}}}}}}})
    found = mapped(write(tmp_path, data))
    made = _options(found, "delete_pod")
    assert set(made["path_params"]) == {"name", "path"}
    assert set(made["params"]) == {"dryRun"}
    assert set(made["body"]) == {"gracePeriodSeconds"}
    notes = " | ".join(found["delete_pod"]["notes"])
    for left_out in ("query parameter 'path'", "body parameter 'dryRun'",
                     "body parameter 'name'"):
        assert f"optional {left_out} left out" in notes


def test_a_required_second_use_of_a_name_is_qualified_by_its_location(tmp_path: Path) -> None:
    data = document({"/vars/{name}": {"patch": {**get("updateVar"), "parameters": [
        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}}}}}}}}})
    found = mapped(write(tmp_path, data))
    assert not found["__skipped__"]
    body = found["update_var"]["data"]["options"]["body"]
    assert body == {"body_name": {"type": "string", "required": True, "wire_name": "name"}}


def test_one_cause_for_every_operation_is_reported_once(tmp_path: Path) -> None:
    """Kubernetes names no server: one error, not one per operation."""
    from compiler.authoring.openapi.generate import ImportSettings, generate
    from compiler.authoring.openapi.import_openapi import read_openapi
    from compiler.authoring.openapi.operations import list_operations

    data = document({f"/r{i}": {"get": get(f"op{i}")} for i in range(5)})
    del data["servers"]
    spec = write(tmp_path, data)
    root, _ = read_openapi(spec.resolve(), str(spec))
    with pytest.raises(ImportRefused) as refused:
        generate(root, list_operations(root), ImportSettings())
    assert [d.code for d in refused.value.diagnostics] == ["openapi-no-server"]
