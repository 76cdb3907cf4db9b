"""Swagger 2.0 read as the OpenAPI 3.0 it means, in memory (Kubernetes still publishes 2.0).

What moves: ``host``/``basePath``/``schemes`` → ``servers``; ``definitions`` →
``components.schemas`` (and every ``$ref`` with it); ``securityDefinitions`` →
``securitySchemes`` (``basic`` as HTTP basic); a ``body`` parameter → ``requestBody``;
``formData`` parameters → a form or multipart body (``type: file`` as a binary string);
other parameters get a ``schema`` and their ``collectionFormat`` as ``style``/``explode``.
Responses are reduced to their descriptions: the importer does not read them. Paths and
operations keep their places, so diagnostics about them point at the original file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.authoring.openapi.operations import METHODS

_REF_PREFIXES = (("#/definitions/", "#/components/schemas/"),
                 ("#/parameters/", "#/components/parameters/"),
                 ("#/responses/", "#/components/responses/"))
_SCHEMA_KEYS = ("type", "format", "items", "enum", "default", "minimum", "maximum",
                "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern",
                "minItems", "maxItems", "uniqueItems", "multipleOf")
# collectionFormat → (style, explode); Swagger's default is csv.
_COLLECTION = {"csv": ("form", False), "multi": ("form", True), "ssv": ("spaceDelimited", False),
               "pipes": ("pipeDelimited", False), "tsv": ("tabDelimited", False)}


def _ref(reference: str) -> str:
    for old, new in _REF_PREFIXES:
        if reference.startswith(old):
            return new + reference[len(old):]
    return reference


def _rewritten(value: Any) -> Any:
    """A copy with every ``$ref`` pointing where the 3.0 layout keeps the target."""
    if isinstance(value, dict):
        return {key: _ref(item) if key == "$ref" and isinstance(item, str) else _rewritten(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_rewritten(item) for item in value]
    return value


def _schema_of(parameter: Mapping[str, Any]) -> dict[str, Any]:
    schema = {key: parameter[key] for key in _SCHEMA_KEYS if key in parameter}
    if schema.get("type") == "file":
        schema = {"type": "string", "format": "binary"}
    if isinstance(schema.get("items"), Mapping):
        schema["items"] = _schema_of(schema["items"])
    return schema


def _parameter(parameter: Mapping[str, Any]) -> dict[str, Any]:
    converted = {key: parameter[key] for key in ("name", "in", "description", "required")
                 if key in parameter}
    converted["schema"] = _schema_of(parameter)
    if parameter.get("type") == "array" and parameter.get("in") == "query":
        style, explode = _COLLECTION.get(str(parameter.get("collectionFormat", "csv")),
                                         ("form", False))
        converted["style"], converted["explode"] = style, explode
    return converted


def _scheme(scheme: Mapping[str, Any]) -> dict[str, Any]:
    kind = scheme.get("type")
    if kind == "basic":
        return {"type": "http", "scheme": "basic"}
    if kind == "oauth2":
        return {"type": "oauth2", "flows": {}}
    return dict(scheme)


def _parameters(written: Any, shared: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for parameter in written if isinstance(written, list) else []:
        if isinstance(parameter, Mapping) and isinstance(parameter.get("$ref"), str):
            name = parameter["$ref"].rpartition("/")[2]
            parameter = shared.get(name, parameter)
        if isinstance(parameter, Mapping):
            found.append(parameter)
    return found


def _operation(operation: Mapping[str, Any], inherited: list[Mapping[str, Any]],
               shared: Mapping[str, Any], consumes: list[str]) -> dict[str, Any]:
    converted = {key: value for key, value in operation.items()
                 if key not in ("parameters", "consumes", "produces", "responses", "schemes")}
    by_key = {(p.get("name"), p.get("in")): p for p in inherited}
    by_key.update({(p.get("name"), p.get("in")): p
                   for p in _parameters(operation.get("parameters"), shared)})
    parameters = list(by_key.values())
    media = [str(m) for m in operation.get("consumes") or consumes] or ["application/json"]
    plain = [_parameter(p) for p in parameters if p.get("in") not in ("body", "formData")]
    if plain:
        converted["parameters"] = plain
    body = [p for p in parameters if p.get("in") == "body"]
    form = [p for p in parameters if p.get("in") == "formData"]
    if body:
        # Every JSON type it consumes (Kubernetes' PATCH: JSON Patch, merge patch,
        # strategic merge patch), one schema: the import chooses among them.
        json_media = [m for m in media if "json" in m] or ["application/json"]
        converted["requestBody"] = {"required": body[0].get("required") is True, "content": {
            m: {"schema": body[0].get("schema", {})} for m in json_media}}
    elif form:
        files = any(p.get("type") == "file" for p in form)
        kind = "multipart/form-data" if files or "multipart/form-data" in media \
            else "application/x-www-form-urlencoded"
        schema = {"type": "object",
                  "properties": {str(p.get("name")): _schema_of(p) for p in form},
                  "required": [str(p.get("name")) for p in form if p.get("required") is True]}
        converted["requestBody"] = {"content": {kind: {"schema": schema}}}
    responses = operation.get("responses")
    converted["responses"] = {str(code): {"description": str(response.get("description", ""))}
                              for code, response in (responses or {}).items()
                              if isinstance(response, Mapping)} or {"default": {
                                  "description": ""}}
    return converted


def convert_swagger2(data: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAPI 3.0.3 document a Swagger 2.0 document means (only what import reads)."""
    document = _rewritten(dict(data))
    result: dict[str, Any] = {"openapi": "3.0.3", "info": document.get("info", {}),
                              "paths": {}}
    host = document.get("host")
    if isinstance(host, str) and host:
        schemes = [s for s in document.get("schemes") or ["https"] if isinstance(s, str)]
        scheme = "https" if "https" in schemes or not schemes else schemes[0]
        result["servers"] = [{"url": f"{scheme}://{host}{document.get('basePath') or ''}"}]
    shared = document.get("parameters") if isinstance(document.get("parameters"), dict) else {}
    result["components"] = {
        "schemas": document.get("definitions") or {},
        "parameters": {name: _parameter(p) for name, p in shared.items()
                       if isinstance(p, Mapping) and p.get("in") not in ("body", "formData")},
        "securitySchemes": {name: _scheme(s) for name, s in
                            (document.get("securityDefinitions") or {}).items()
                            if isinstance(s, Mapping)},
    }
    if "security" in document:
        result["security"] = document["security"]
    consumes = [str(m) for m in document.get("consumes") or []]
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        inherited = _parameters(item.get("parameters"), shared)
        result["paths"][path] = {
            method: _operation(item[method], inherited, shared, consumes)
            for method in METHODS if isinstance(item.get(method), Mapping)}
    return result
