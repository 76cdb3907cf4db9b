"""Swagger 2.0 (Kubernetes publishes it) read as the OpenAPI 3.0 it means."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.authoring.openapi.helpers import imported, mapped, messages, write

KUBERNETES_LIKE: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1.30.0"},
    "host": "k8s.example.com", "schemes": ["https"], "basePath": "/",
    "consumes": ["application/json"],
    "securityDefinitions": {"BearerToken": {"type": "apiKey", "in": "header",
                                            "name": "authorization"}},
    "security": [{"BearerToken": []}],
    "parameters": {
        "namespace": {"name": "namespace", "in": "path", "required": True, "type": "string",
                      "uniqueItems": True},
        "body-pod": {"name": "body", "in": "body", "required": True,
                     "schema": {"$ref": "#/definitions/Pod"}},
        "limit": {"name": "limit", "in": "query", "type": "integer"},
    },
    "definitions": {"Pod": {"type": "object", "required": ["metadata"], "properties": {
        "metadata": {"$ref": "#/definitions/ObjectMeta"},
        "status": {"type": "string", "readOnly": True}}},
        "ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}}},
    "paths": {
        "/api/v1/namespaces/{namespace}/pods": {
            "parameters": [{"$ref": "#/parameters/namespace"}],
            "get": {"operationId": "listCoreV1NamespacedPod", "tags": ["core_v1"],
                    "parameters": [{"$ref": "#/parameters/limit"},
                                   {"name": "labels", "in": "query", "type": "array",
                                    "items": {"type": "string"}}],
                    "responses": {"200": {"description": "OK"}}},
            "post": {"operationId": "createCoreV1NamespacedPod", "tags": ["core_v1"],
                     "parameters": [{"$ref": "#/parameters/body-pod"}],
                     "responses": {"201": {"description": "Created"}}},
        },
        "/upload": {"post": {"operationId": "upload", "consumes": ["multipart/form-data"],
                             "parameters": [{"name": "file", "in": "formData",
                                             "type": "file", "required": True},
                                            {"name": "note", "in": "formData",
                                             "type": "string"}],
                             "responses": {"200": {"description": "OK"}}}},
    },
}


def test_swagger2_reads_as_openapi3(tmp_path: Path) -> None:
    found = mapped(write(tmp_path, KUBERNETES_LIKE, "swagger.json"))
    listing = found["list_core_v1_namespaced_pod"]["data"]["options"]
    assert listing["url"] == "https://k8s.example.com/api/v1/namespaces/{namespace}/pods"
    assert listing["path_params"] == {"namespace": {"type": "string", "required": True}}
    assert listing["params"]["limit"] == {"type": "integer", "required": False}
    assert listing["params"]["labels"]["style"] == "comma"  # collectionFormat csv
    assert listing["headers"] == {"authorization": "${KUBERNETES_BEARER_TOKEN}"}
    body = found["create_core_v1_namespaced_pod"]["data"]["options"]["body"]
    assert body == {"metadata": {"type": "object", "required": True,
                                 "properties": {"name": {"type": "string"}}}}
    upload = found["upload"]["data"]["options"]
    assert upload["files"]["file"]["required"] is True
    assert upload["body"] == {"note": {"type": "string"}}


def test_swagger2_import_compiles_and_says_how_it_was_read(tmp_path: Path) -> None:
    spec = write(tmp_path, KUBERNETES_LIKE, "swagger.json")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    assert "read as the OpenAPI 3.0 it means" in messages(outcome)
    assert len(outcome.written) == 3
    origin = (tmp_path / "out" / "create_core_v1_namespaced_pod.yaml").read_text()
    assert "operation: '#/paths/~1api~1v1~1namespaces~1{namespace}~1pods/post'" in origin
