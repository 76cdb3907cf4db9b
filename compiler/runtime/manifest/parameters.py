"""The parameter sections of an api capability and the parameter-entry vocabulary (SPEC §10).

One table, read by the compile-time checks, by normalization and by the runtime: which
``options`` key holds which arguments, what binding they get in the manifest, and whether
they may be arrays or objects. Beside it, the words of a parameter entry (its keywords,
the JSON Schema keyword each one becomes, the query styles, the known formats, the depth
bound) and the one translation of an entry into the JSON Schema the model is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from compiler.runtime.manifest.fields import json_copy
from compiler.runtime.records import record

__all__ = [
    "ARRAY_STYLES", "BODY", "DEFAULT_ARRAY_STYLE", "FILES", "FORMATS", "HEADER",
    "KEYWORDS_BY_TYPE",
    "MAX_PARAMETER_DEPTH", "OBJECT_STYLES", "PARAMETER_SECTIONS", "PATH", "QUERY",
    "SCHEMA_KEYWORDS", "SECTION_BY_BINDING", "SECTION_BY_KEY", "STRUCTURED_TYPES", "TEMPLATE",
    "WIRE_NAME", "ParameterNode", "ParameterSection", "accepted_shape", "added_fields",
    "parameter_schema", "walk_parameter", "with_wire_names", "within_accepted",
]


@record(frozen=True, slots=True)
class ParameterSection:
    """One ``options`` key holding arguments: its manifest binding and what it may hold."""

    key: str
    binding: str
    # Whether its entries may be arrays and objects (a path segment or a multipart text
    # field is one string on the wire, so those sections hold scalars only).
    structured: bool


PATH = ParameterSection("path_params", "path", structured=False)
QUERY = ParameterSection("params", "query", structured=True)
# A request header per argument (SPEC §11 header parameters): one string on the wire.
HEADER = ParameterSection("header_params", "header", structured=False)
BODY = ParameterSection("body", "body", structured=True)
TEMPLATE = ParameterSection("body_params", "template", structured=True)
FILES = ParameterSection("files", "file", structured=False)
# The one order: URL slots first, then the query, the headers, the body, the template and
# the files. Normalization adds arguments in it, the checks report in it, the runtime binds
# by it.
PARAMETER_SECTIONS = (PATH, QUERY, HEADER, BODY, TEMPLATE, FILES)
SECTION_BY_KEY = {section.key: section for section in PARAMETER_SECTIONS}
SECTION_BY_BINDING = {section.binding: section for section in PARAMETER_SECTIONS}

SCALAR_TYPES = ("string", "integer", "number", "boolean")
STRUCTURED_TYPES = ("array", "object")
# Query encodings (SPEC §10): an array's is optional (repeat), an object's is required.
# `pipe` and `space` are OpenAPI's pipeDelimited and spaceDelimited (docs/parameters.md).
ARRAY_STYLES = ("repeat", "comma", "brackets", "pipe", "space")
OBJECT_STYLES = ("deep_object", "json")
DEFAULT_ARRAY_STYLE = "repeat"
# JSON Schema and OpenAPI formats a model and a validator both understand.
FORMATS: Mapping[str, tuple[str, ...]] = {
    "string": ("date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6",
               "uri", "uuid", "byte", "binary", "password"),
    "integer": ("int32", "int64"),
    "number": ("float", "double"),
}
# How deep entries may nest (the top-level parameter is depth 1).
MAX_PARAMETER_DEPTH = 32

# A parameter entry's keyword -> its JSON Schema namesake (annotations and constraints).
SCHEMA_KEYWORDS: Mapping[str, str] = {
    "description": "description", "default": "default", "enum": "enum", "format": "format",
    "minimum": "minimum", "maximum": "maximum", "min_length": "minLength",
    "max_length": "maxLength", "pattern": "pattern", "min_items": "minItems",
    "max_items": "maxItems",
}
# The name the value travels under when it is not the argument's (``$filter``,
# ``api-version``, ``@odata.type``): the model sees the argument name, the server the wire
# name. Never part of the schema the model is shown.
WIRE_NAME = "wire_name"
_ANY_TYPE = ("type", "description", "required", "default", "enum", "nullable", "style",
             WIRE_NAME)
# Which keywords mean something on which type; any other is a located error.
KEYWORDS_BY_TYPE: Mapping[str, frozenset[str]] = {
    "string": frozenset((*_ANY_TYPE, "format", "min_length", "max_length", "pattern")),
    "integer": frozenset((*_ANY_TYPE, "format", "minimum", "maximum")),
    "number": frozenset((*_ANY_TYPE, "format", "minimum", "maximum")),
    "boolean": frozenset(_ANY_TYPE),
    "array": frozenset((*_ANY_TYPE, "items", "min_items", "max_items")),
    "object": frozenset((*_ANY_TYPE, "properties", "additional_properties")),
}


@record(frozen=True, slots=True)
class ParameterNode:
    """One entry in a parameter tree: where it is (YAML path) and how deep (top: 1)."""

    path: tuple[str | int, ...]
    spec: Mapping[str, Any]
    depth: int
    # The field path a model or a reviewer reads: ``items[].price``, ``filter.state``.
    field: str
    # What it is to its parent: parameter (top), field, items or values (of an open map).
    role: str = "parameter"


def walk_parameter(
    spec: Any, path: tuple[str | int, ...], field: str, limit: int = MAX_PARAMETER_DEPTH + 1
) -> list[ParameterNode]:
    """Every entry of one parameter tree, parents first, no deeper than ``limit``.

    Iterative, so a hostile 200-level tree costs a list, not the stack. Entries that are
    not mappings are skipped (the JSON Schema reports those). A list, not a generator:
    most trees are one flat entry, and the checks read every node anyway.
    """
    if type(spec) is not dict and not isinstance(spec, Mapping):
        return []
    root = ParameterNode(path, spec, 1, field)
    if "items" not in spec and "additional_properties" not in spec \
            and "properties" not in spec:
        return [root]  # a flat entry (most of them): nothing below it
    walked: list[ParameterNode] = []
    pending = [root]
    while pending:
        node = pending.pop()
        walked.append(node)
        if node.depth >= limit:
            continue
        # Most entries have none of the three keys: test None first, then the exact type,
        # before the (slow) Mapping ABC check.
        items = node.spec.get("items")
        if items is not None and (type(items) is dict or isinstance(items, Mapping)):
            pending.append(ParameterNode((*node.path, "items"), items, node.depth + 1,
                                         f"{node.field}[]", "items"))
        extra = node.spec.get("additional_properties")
        if extra is not None and (type(extra) is dict or isinstance(extra, Mapping)):
            pending.append(ParameterNode((*node.path, "additional_properties"), extra,
                                         node.depth + 1, f"{node.field}.*", "values"))
        properties = node.spec.get("properties")
        if properties is not None and (type(properties) is dict
                                       or isinstance(properties, Mapping)):
            for name in reversed(list(properties)):
                child = properties[name]
                if type(child) is dict or isinstance(child, Mapping):
                    pending.append(ParameterNode((*node.path, "properties", name), child,
                                                 node.depth + 1, f"{node.field}.{name}",
                                                 "field"))
    return walked


def parameter_schema(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one (checked) parameter entry, nested entries included.

    ``nullable`` becomes a ``["TYPE", "null"]`` type (and ``null`` joins an enum), the form
    OpenAI strict function calling and Anthropic tool use both read. An object is closed
    unless it declares ``additional_properties``; its ``required`` lists the fields that
    are required and have no default.
    """
    kind = spec.get("type", "string")
    nullable = bool(spec.get("nullable", False))
    schema: dict[str, Any] = {"type": [kind, "null"] if nullable else kind}
    for keyword, json_keyword in SCHEMA_KEYWORDS.items():
        if keyword in spec:
            schema[json_keyword] = json_copy(spec[keyword])
    if nullable and "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    if kind == "array":
        schema["items"] = parameter_schema(spec.get("items") or {})
    elif kind == "object":
        properties: Mapping[str, Any] = spec.get("properties") or {}
        extra = spec.get("additional_properties", False)
        if properties or not isinstance(extra, Mapping):  # a pure map lists no fields
            schema["properties"] = {name: parameter_schema(child)
                                    for name, child in properties.items()}
        required = [name for name, child in properties.items()
                    if child.get("required", False) and "default" not in child]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = (
            parameter_schema(extra) if isinstance(extra, Mapping) else bool(extra))
    return schema


def accepted_shape(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The structure of an argument's compiled schema (``type``, ``properties``, ``items``,
    ``additionalProperties``): what the executor accepts, whatever an override shows later."""
    shape: dict[str, Any] = {"type": json_copy(schema.get("type"))}
    if isinstance(schema.get("items"), Mapping):
        shape["items"] = accepted_shape(schema["items"])
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        shape["properties"] = {name: accepted_shape(child) if isinstance(child, Mapping) else {}
                               for name, child in properties.items()}
    extra = schema.get("additionalProperties")
    if extra is not None:
        shape["additionalProperties"] = (accepted_shape(extra) if isinstance(extra, Mapping)
                                         else bool(extra))
    return shape


def within_accepted(value: Any, shape: Mapping[str, Any] | None) -> Any:
    """``value`` with every object key the accepted ``shape`` has no place for dropped, at
    any depth (SPEC §2.2's call-time drop, nested): a field an override showed the model,
    and the executor never accepted, is not sent. Iterative, linear in ``value``."""
    if shape is None:
        return value
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any, Any]] = [(value, shape, root, 0)]
    while pending:
        node, node_shape, parent, key = pending.pop()
        if not isinstance(node_shape, Mapping):
            parent[key] = node
        elif isinstance(node, Mapping):
            properties = node_shape.get("properties") or {}
            extra = node_shape.get("additionalProperties", False)
            wire: Mapping[str, str] = node_shape.get("wire") or {}
            kept: dict[str, Any] = {}
            parent[key] = kept
            for name, item in node.items():
                child = properties.get(name, extra if isinstance(extra, Mapping) else None)
                if name in properties or isinstance(extra, Mapping) or extra is True:
                    sent: str = wire.get(name, name) if name in properties else name
                    kept[sent] = None
                    pending.append((item, child, kept, sent))
        elif isinstance(node, list | tuple):
            items: list[Any] = [None] * len(node)
            parent[key] = items
            pending += [(item, node_shape.get("items"), items, index)
                        for index, item in enumerate(node)]
        else:
            parent[key] = node
    return root[0]


def with_wire_names(shape: dict[str, Any], spec: Mapping[str, Any]) -> dict[str, Any]:
    """``shape`` (from :func:`accepted_shape`) with, on each object whose fields have a
    ``wire_name``, a ``wire`` map of field name to the name sent: :func:`within_accepted`
    renames as it keeps. Iterative; ``spec`` is the checked entry the shape was made from."""
    pending: list[tuple[dict[str, Any], Any]] = [(shape, spec)]
    while pending:
        node, entry = pending.pop()
        if not isinstance(entry, Mapping):
            continue
        items = entry.get("items")
        if isinstance(node.get("items"), dict) and isinstance(items, Mapping):
            pending.append((node["items"], items))
        extra = entry.get("additional_properties")
        if isinstance(node.get("additionalProperties"), dict) and isinstance(extra, Mapping):
            pending.append((node["additionalProperties"], extra))
        fields = entry.get("properties")
        shaped = node.get("properties")
        if not isinstance(fields, Mapping) or not isinstance(shaped, dict):
            continue
        wire = {name: field[WIRE_NAME] for name, field in fields.items()
                if isinstance(field, Mapping) and isinstance(field.get(WIRE_NAME), str)}
        if wire:
            node["wire"] = wire
        pending += [(shaped[name], field) for name, field in fields.items()
                    if isinstance(shaped.get(name), dict)]
    return shape


_MAPPING_TYPES = frozenset({dict, MappingProxyType})


def added_fields(shown: Any, accepted: Any, field: str) -> list[str]:
    """Field paths ``shown`` declares that ``accepted`` has no place for (nested only)."""
    found: list[str] = []
    pending: list[tuple[Any, Any, str]] = [(shown, accepted, field)]
    while pending:
        node, base, where = pending.pop()
        # Exact dicts and proxies first: the Mapping ABC check is slow, and every override
        # of a tree compares each of its tool's arguments here.
        if not (type(node) in _MAPPING_TYPES or isinstance(node, Mapping)) \
                or not (type(base) in _MAPPING_TYPES or isinstance(base, Mapping)):
            continue
        base_properties = base.get("properties") or {}
        open_map = base.get("additionalProperties", False)
        for name, child in (node.get("properties") or {}).items():
            if name in base_properties:
                pending.append((child, base_properties[name], f"{where}.{name}"))
            elif not open_map:
                found.append(f"{where}.{name}")
        items = node.get("items")
        if items is not None and isinstance(items, Mapping):  # None: no slow ABC check
            pending.append((items, base.get("items"), f"{where}[]"))
    return sorted(found)
