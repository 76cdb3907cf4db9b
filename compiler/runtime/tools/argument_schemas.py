"""What a generated argument model can enforce: the JSON Schema subset of tool inputs.

A tool's ``input_schema`` is an object schema whose properties are scalars, arrays and
objects nested to :data:`MAX_PARAMETER_DEPTH` (SPEC §10). :func:`unsupported_schema_features`
lists what falls outside (the compiler reports it for overridden schemas, the runtime
refuses such a tool), and :func:`builds_cleanly` says when pydantic is sure to build the
validator, so building it can wait for the first call. Both walk iteratively: a schema is
data from a manifest, and a deep one must cost a list, not the stack.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from compiler.runtime.manifest.parameters import MAX_PARAMETER_DEPTH

SCALAR_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
ANNOTATION_KEYWORDS = frozenset({"description", "title", "examples", "default"})
SCALAR_KEYWORDS = frozenset(
    {"type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
     "maxLength", "pattern", "format"}
) | ANNOTATION_KEYWORDS
ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"}) | ANNOTATION_KEYWORDS
OBJECT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "title", "$schema"}
)
NESTED_OBJECT_KEYWORDS = OBJECT_KEYWORDS - {"$schema"} | ANNOTATION_KEYWORDS
NUMERIC_CONSTRAINTS = {"minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt",
                       "exclusiveMaximum": "lt"}
NULL = "null"


def schema_type(schema: Mapping[str, Any]) -> tuple[Any, bool]:
    """``(type, nullable)`` of a property schema: ``["string", "null"]`` is a nullable
    string; any other list is returned as is (and reported as unsupported)."""
    kind = schema.get("type")
    if isinstance(kind, list | tuple) and len(kind) == 2 and NULL in kind:
        other = kind[1] if kind[0] == NULL else kind[0]
        return other, True
    return kind, False


def unsupported_schema_features(input_schema: Any) -> list[str]:
    """What in ``input_schema`` a generated argument model cannot enforce (empty when fine)."""
    problems: list[str] = []
    if not isinstance(input_schema, Mapping):
        return ["the input schema must be an object schema (a mapping)"]
    if input_schema.get("type", "object") != "object":
        problems.append(f"top-level type must be 'object', not {input_schema.get('type')!r}")
    problems += [f"top-level keyword {key!r} is not supported"
                 for key in sorted(set(input_schema) - OBJECT_KEYWORDS)]
    if input_schema.get("additionalProperties", False) is not False:
        problems.append(
            "additionalProperties must be false or absent (extra arguments are refused)"
        )
    properties = input_schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return [*problems, "properties must be a mapping"]
    problems += _required_problems(input_schema, properties)
    for name, schema in properties.items():
        for where, problem in _property_problems(schema):
            problems.append(f"property {name!r}{where}: {problem}")
    return problems


def _required_problems(schema: Mapping[str, Any], properties: Mapping[str, Any]) -> list[str]:
    required = schema.get("required", [])
    if not isinstance(required, list | tuple) or not all(isinstance(n, str) for n in required):
        return ["required must be a list of property names"]
    return [f"required property {name!r} is not in properties"
            for name in required if name not in properties]


def _nodes(schema: Any) -> Iterator[tuple[str, int, Any]]:
    """``(where, depth, schema)`` for a property schema and every schema nested in it."""
    pending: list[tuple[str, int, Any]] = [("", 1, schema)]
    while pending:
        where, depth, node = pending.pop()
        yield where, depth, node
        if not isinstance(node, Mapping) or depth > MAX_PARAMETER_DEPTH:
            continue
        if isinstance(node.get("items"), Mapping):
            pending.append((f"{where}[]", depth + 1, node["items"]))
        if isinstance(node.get("additionalProperties"), Mapping):
            pending.append((f"{where}.*", depth + 1, node["additionalProperties"]))
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            pending += [(f"{where}.{name}", depth + 1, child)
                        for name, child in properties.items()]


def _property_problems(schema: Any) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for where, depth, node in _nodes(schema):
        if depth > MAX_PARAMETER_DEPTH:
            problems.append((where, f"nested deeper than {MAX_PARAMETER_DEPTH} levels"))
        elif not isinstance(node, Mapping):
            problems.append((where, "must be a schema mapping"))
        else:
            problems += [(where, problem) for problem in _node_problems(node)]
    return problems


def _node_problems(schema: Mapping[str, Any]) -> list[str]:
    kind, _ = schema_type(schema)
    if kind == "array":
        problems = [f"keyword {key!r} is not supported on arrays"
                    for key in sorted(set(schema) - ARRAY_KEYWORDS)]
        if not isinstance(schema.get("items"), Mapping):
            problems.append("an array needs an items schema")
        return problems + _default_problems(schema)
    if kind == "object":
        problems = [f"keyword {key!r} is not supported on objects"
                    for key in sorted(set(schema) - NESTED_OBJECT_KEYWORDS)]
        properties = schema.get("properties", {})
        if not isinstance(properties, Mapping):
            return [*problems, "properties must be a mapping"]
        extra = schema.get("additionalProperties", False)
        if not (extra is False or isinstance(extra, Mapping)):
            problems.append("additionalProperties must be false or a schema")
        return problems + _required_problems(schema, properties) + _default_problems(schema)
    return _scalar_problems(schema) + _default_problems(schema)


def _scalar_problems(schema: Mapping[str, Any]) -> list[str]:
    kind, nullable = schema_type(schema)
    if kind not in SCALAR_TYPES:
        return [f"type {schema.get('type')!r} is not supported (use string, integer, number, "
                "boolean, array or object, optionally with null)"]
    problems = [
        f"keyword {key!r} is not supported" for key in sorted(set(schema) - SCALAR_KEYWORDS)
    ]
    enum = schema.get("enum")
    if enum is not None:
        if not isinstance(enum, list | tuple) or not enum:
            problems.append("enum must be a non-empty list")
        elif not all(matches_type(value, kind) or (nullable and value is None)
                     for value in enum):
            problems.append(f"enum values must all be of type {kind}")
    pattern = schema.get("pattern")
    if pattern is not None and not pattern_compiles(pattern):
        problems.append(f"pattern {pattern!r} does not compile in the argument model's regex "
                        "engine (look-arounds and backreferences are not supported)")
    return problems


def pattern_compiles(pattern: Any) -> bool:
    """Whether pydantic-core's regex engine (the one argument models use) accepts it."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except (SchemaError, TypeError):
        return False
    return True


def _default_problems(schema: Mapping[str, Any]) -> list[str]:
    if "default" not in schema or schema["default"] is None:
        return []
    default = schema["default"]
    return [] if value_fits(default, schema) else [f"default {default!r} does not fit the schema"]


def value_fits(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` has the JSON shape of ``schema`` (types only, nested; constraints
    are the validator's). Iterative: a default is as deep as its schema allows."""
    pending = [(value, schema)]
    while pending:
        item, node = pending.pop()
        if not isinstance(node, Mapping):
            return False
        kind, nullable = schema_type(node)
        if item is None:
            if not nullable:
                return False
        elif kind == "array":
            if not isinstance(item, list | tuple):
                return False
            pending += [(element, node.get("items", {})) for element in item]
        elif kind == "object":
            if not isinstance(item, Mapping):
                return False
            properties = node.get("properties", {})
            extra = node.get("additionalProperties", False)
            for key, element in item.items():
                child = properties.get(key, extra)
                if not isinstance(child, Mapping):
                    return False
                pending.append((element, child))
        elif not matches_type(item, kind):
            return False
    return True


def matches_type(value: Any, kind: Any) -> bool:
    """Whether a scalar ``value`` is of JSON type ``kind`` (a boolean is not a number)."""
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return kind == "string" and isinstance(value, str)


def builds_cleanly(input_schema: Mapping[str, Any]) -> bool:
    """Whether the model of a supported ``input_schema`` is sure to build its validator.

    Conservative: every constraint has the type pydantic expects where pydantic applies
    it, descriptions are text, and every pattern compiles in pydantic-core's own regex
    engine (which refuses some patterns Python's accepts, such as look-arounds).
    """
    for schema in input_schema.get("properties", {}).values():
        for _, _, node in _nodes(schema):
            if not _clean_description(node):
                return False
            kind, _ = schema_type(node)
            if kind == "array":
                if not (_length(node, "minItems") and _length(node, "maxItems")):
                    return False
            elif kind != "object" and not _clean_scalar(node):
                return False
    return True


def _clean_scalar(schema: Mapping[str, Any]) -> bool:
    kind, _ = schema_type(schema)
    numeric = [schema[name] for name in NUMERIC_CONSTRAINTS if name in schema]
    if numeric:
        allowed: tuple[type, ...] = (int,) if kind == "integer" else (int, float)
        if kind not in ("integer", "number") or not all(
            type(value) in allowed for value in numeric
        ):
            return False
    textual = "minLength" in schema or "maxLength" in schema or "pattern" in schema
    if textual and (kind != "string" or not (_length(schema, "minLength")
                                             and _length(schema, "maxLength"))):
        return False
    pattern = schema.get("pattern")
    return pattern is None or pattern_compiles(pattern)


def _length(schema: Mapping[str, Any], name: str) -> bool:
    value = schema.get(name)
    return value is None or (type(value) is int and value >= 0)


def _clean_description(schema: Mapping[str, Any]) -> bool:
    return isinstance(schema.get("description"), str | None)
