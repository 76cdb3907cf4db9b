"""Valid capability documents → manifest entries (the shape of docs/manifest.md).

Defaults are filled in here, once, so the runtime, ``diff`` and ``docs`` never guess.
"""

from __future__ import annotations

import copy
from typing import Any

from compiler.checks.api import template_slots, tool_name, url_slots
from compiler.checks.interpolation import placeholders_in
from compiler.runtime.descriptors import split_namespace
from compiler.source.documents import SourceDocument

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
MCP_KNOWN_OPTIONS = ("server_label", "server_url", "require_approval", "headers", "allowed_tools")
METADATA_KEYS = ("is_default", "ordering", "access_type")


def source_of(document: SourceDocument, path: tuple[str | int, ...] = ()) -> dict[str, Any]:
    """``{"path", "line"}`` of a node, for provenance."""
    if not path:
        return {"path": document.path, "line": document.first_line}
    return {"path": document.path, "line": document.location(path).line}


def capability_entry(document: SourceDocument) -> dict[str, Any]:
    """The manifest entry of one valid Capability document."""
    data = document.data
    entry: dict[str, Any] = {
        "code": data["code"],
        "name": data["name"],
        "description": data.get("description"),
        "type": data["type"],
        "metadata": {key: data[key] for key in METADATA_KEYS if key in data},
        "when": copy.deepcopy(data.get("when")),
        "source": source_of(document),
    }
    options = data.get("options") or {}
    if data["type"] == "internal":
        entry["internal"] = {"codes": list(options.get("codes") or [data["code"]])}
    elif data["type"] == "mcp":
        entry["mcp"] = _mcp_entry(options)
    else:
        entry["api"], entry["tool"] = _api_entry(document, options)
    return entry


def _mcp_entry(options: dict[str, Any]) -> dict[str, Any]:
    headers = dict(options.get("headers") or {})
    return {
        "server_label": options["server_label"],
        "server_url": options["server_url"],
        "require_approval": copy.deepcopy(options.get("require_approval")),
        "headers": headers,
        "allowed_tools": copy.deepcopy(options.get("allowed_tools")),
        "extra": {k: copy.deepcopy(v) for k, v in options.items() if k not in MCP_KNOWN_OPTIONS},
        "placeholders": placeholders_in([options["server_url"], headers]),
    }


def _api_entry(
    document: SourceDocument, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    url: str = options["url"]
    headers = dict(options.get("headers") or {})
    template = copy.deepcopy(options.get("body_template"))
    arguments: dict[str, dict[str, Any]] = {}
    properties: dict[str, dict[str, Any]] = {}
    required: list[str] = []

    def add(name: str, binding: str, spec: dict[str, Any], *, always_required: bool) -> None:
        argument = arguments.get(name)
        if argument is not None:  # a URL slot that is also a template slot: one argument
            argument["bindings"].append(binding)
            return
        kind = spec.get("type", "string")
        arguments[name] = {"bindings": [binding], "type": kind}
        properties[name] = _property(kind, spec)
        if (always_required or spec.get("required", False)) and "default" not in spec:
            required.append(name)

    path_specs = options.get("path_params") or {}
    for slot in url_slots(url):
        add(slot, "path", path_specs.get(slot, {}), always_required=True)
    for section, binding in (("params", "query"), ("body", "body")):
        for name, spec in (options.get(section) or {}).items():
            add(name, binding, spec, always_required=False)
    if "body_template" in options:
        template_specs = options.get("body_params") or {}
        for slot in template_slots(template):
            spec = template_specs.get(slot) or path_specs.get(slot) or {}
            add(slot, "template", spec, always_required=slot not in template_specs
                or bool(spec.get("required", False)))
    for name, spec in (options.get("files") or {}).items():
        multiple = bool(spec.get("multiple", False))
        arguments[name] = {"bindings": ["file"], "type": "integer", "multiple": multiple}
        document_id: dict[str, Any] = {"type": "integer"}
        properties[name] = (
            {"type": "array", "items": document_id, "minItems": 1} if multiple else document_id
        )
        if spec.get("description"):
            properties[name]["description"] = spec["description"]
        if spec.get("required", False):
            required.append(name)
    api = {
        "method": options.get("method", "GET"),
        "url": url,
        "headers": headers,
        "body_template": template,
        "timeout": float(options.get("timeout", DEFAULT_TIMEOUT)),
        "max_response_bytes": int(options.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)),
        "arguments": arguments,
        "placeholders": placeholders_in([url, headers, template]),
    }
    name = tool_name(document.data)
    schema_path = next((("options", s) for s in ("path_params", "params", "body", "body_params",
                                                  "files") if s in options), ("options", "url"))
    tool = {
        "name": name,
        "original_name": name,
        "description": options["description"],
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        "output_schema": None,
        "namespace": _namespace(name),
        "provenance": {
            "name": source_of(document, ("options", "name") if "name" in options else ("code",)),
            "description": source_of(document, ("options", "description")),
            "input_schema": source_of(document, schema_path),
            "output_schema": None,
            "namespace": None,
        },
        "overrides": [],
    }
    return api, tool


def _property(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": kind}
    for key in ("description", "default", "enum"):
        if key in spec:
            prop[key] = copy.deepcopy(spec[key])
    return prop


def _namespace(name: str) -> str | None:
    return split_namespace(name)[0]
