"""The schema of what ``select`` makes of a reply: a JMESPath AST walked over a JSON Schema.

Each node is followed as jmespath's own interpreter evaluates it (``jmespath.visitor``),
so the projected schema admits every value the expression can yield: a field or an index
that may be missing, or that is read from a value of another type, yields ``null``;
projections drop ``null`` results; multi-selects build exact lists and objects; a
filter keeps the element schema. A node the walk cannot follow raises
:class:`CannotFollow`, and the caller drops the output schema with a note: a schema is
never guessed. Schemas here are the subset ``compiler.runtime.api.output_validation``
checks (the declared schema was checked to be in it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compiler.runtime.api.output_validation import JSON_TYPES

Schema = Any  # a JSON Schema: a mapping or a boolean
ANYTHING: dict[str, Any] = {}
NULL: dict[str, Any] = {"type": "null"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
# Keywords that only describe: kept where the value is passed through, never relied on.
_COMBINERS = ("anyOf", "oneOf")


class CannotFollow(Exception):
    """The expression does something whose result schema the compiler does not know."""


def project(expression_ast: Mapping[str, Any], schema: Schema) -> Schema:
    """The schema of ``expression_ast``'s result over values of ``schema``."""
    kind = expression_ast["type"]
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise CannotFollow(f"the expression uses {kind.replace('_', ' ')}")
    return simplified(handler(expression_ast, schema))


# -- what a schema admits -------------------------------------------------------------------

def types_of(schema: Schema) -> frozenset[str]:
    """The JSON types values of ``schema`` may have (``integer`` counted as ``number``)."""
    if schema is False:
        return frozenset()
    if schema is True or not isinstance(schema, Mapping):
        return frozenset(JSON_TYPES)
    found = frozenset(JSON_TYPES)
    kind = schema.get("type")
    if kind is not None:
        named = {kind} if isinstance(kind, str) else set(kind)
        if "integer" in named:
            named.add("number")
        found = frozenset(named)
    if "const" in schema:
        found &= _value_types([schema["const"]])
    if "enum" in schema:
        found &= _value_types(schema["enum"])
    for combiner in _COMBINERS:
        if combiner in schema:
            found &= frozenset().union(*(types_of(part) for part in schema[combiner]))
    for part in schema.get("allOf", ()):
        found &= types_of(part)
    return found


def _value_types(values: list[Any]) -> frozenset[str]:
    found = set()
    for value in values:
        found |= {name for name, test in _VALUE_TESTS.items() if test(value)}
    return frozenset(found)


_VALUE_TESTS: dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None, "boolean": lambda v: isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str), "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null."""
    if "null" in types_of(schema):
        return schema
    if schema is False:
        return NULL
    kind = schema.get("type")
    if kind is not None and not any(key in schema for key in ("enum", "const", *_COMBINERS,
                                                               "allOf")):
        names = [kind] if isinstance(kind, str) else list(kind)
        return {**schema, "type": [*names, "null"]}
    return {"anyOf": [schema, NULL]}


def without_null(schema: Schema) -> Schema:
    """``schema`` minus null (what a projection keeps of its results)."""
    if "null" not in types_of(schema):
        return schema
    if not isinstance(schema, Mapping):
        return {"type": [name for name in JSON_TYPES if name != "null"]}
    if "allOf" not in schema and not any(key in schema for key in _COMBINERS):
        narrowed = dict(schema)
        kind = schema.get("type", list(JSON_TYPES))
        rest = [name for name in ([kind] if isinstance(kind, str) else kind) if name != "null"]
        if not rest:
            return False
        narrowed["type"] = rest[0] if len(rest) == 1 else rest
        if "enum" in schema:
            narrowed["enum"] = [value for value in schema["enum"] if value is not None]
        if "const" in schema and schema["const"] is None:
            return False
        return narrowed
    if set(schema) <= {"anyOf", "oneOf"} and len(schema) == 1:
        combiner = next(iter(schema))
        return any_of([without_null(part) for part in schema[combiner]])
    return {"allOf": [schema, {"type": [name for name in JSON_TYPES if name != "null"]}]}


def any_of(parts: list[Schema]) -> Schema:
    """The union of ``parts`` (flattened, duplicates removed, ``false`` dropped)."""
    flat: list[Schema] = []
    for part in parts:
        nested = part.get("anyOf") if isinstance(part, Mapping) and len(part) == 1 else None
        for item in nested if nested is not None else [part]:
            if item is False or item in flat:
                continue
            if item is True or item == ANYTHING:
                return ANYTHING
            flat.append(item)
    if not flat:
        return False
    return flat[0] if len(flat) == 1 else {"anyOf": flat}


def simplified(schema: Schema) -> Schema:
    """``schema`` with a trivial ``anyOf`` unwrapped."""
    if isinstance(schema, Mapping) and set(schema) == {"anyOf"}:
        return any_of(list(schema["anyOf"]))
    return schema


def elements(schema: Schema) -> Schema:
    """The schema of any one item of an array of ``schema``."""
    if not isinstance(schema, Mapping):
        return schema
    if _split(schema) is not None:
        return any_of([elements(part) for part in _split(schema) or ()])
    prefix = list(schema.get("prefixItems") or ())
    return any_of([*prefix, schema.get("items", True)])


def _split(schema: Mapping[str, Any]) -> list[Schema] | None:
    """The branches of a schema that is only an ``anyOf``/``oneOf`` (plus annotations)."""
    if "allOf" in schema:
        raise CannotFollow("the schema uses allOf where select reads into it")
    for combiner in _COMBINERS:
        if combiner in schema:
            if any(key in schema for key in ("type", "properties", "items", "prefixItems",
                                              "additionalProperties")):
                raise CannotFollow(f"the schema mixes {combiner} with other keywords where "
                                   "select reads into it")
            return list(schema[combiner])
    return None


# -- the nodes ------------------------------------------------------------------------------

def _field(node: Mapping[str, Any], schema: Schema) -> Schema:
    name = node["value"]
    if not isinstance(schema, Mapping):
        return NULL if schema is False else ANYTHING
    branches = _split(schema)
    if branches is not None:
        return any_of([_field(node, part) for part in branches])
    types = types_of(schema)
    if "object" not in types:
        return NULL
    properties = schema.get("properties") or {}
    if name in properties:
        found = properties[name]
        always = name in (schema.get("required") or ()) and types == {"object"}
        return found if always else nullable(found)
    extra = schema.get("additionalProperties", True)
    return NULL if extra is False else nullable(ANYTHING if extra is True else extra)


def _index(node: Mapping[str, Any], schema: Schema) -> Schema:
    position = node["value"]
    if not isinstance(schema, Mapping):
        return NULL if schema is False else ANYTHING
    branches = _split(schema)
    if branches is not None:
        return any_of([_index(node, part) for part in branches])
    types = types_of(schema)
    if "array" not in types:
        return NULL
    prefix = list(schema.get("prefixItems") or ())
    if position >= 0:
        found = prefix[position] if position < len(prefix) else schema.get("items", True)
        always = types == {"array"} and position < schema.get("minItems", 0)
    else:
        found, always = elements(schema), False
    return found if always else nullable(ANYTHING if found is True else found)


def _slice(node: Mapping[str, Any], schema: Schema) -> Schema:
    types = types_of(schema)
    if "array" not in types:
        return NULL
    result: dict[str, Any] = {"type": "array", "items": elements(schema)}
    if isinstance(schema, Mapping) and "maxItems" in schema:
        result["maxItems"] = schema["maxItems"]
    return result if types == {"array"} else nullable(result)


def _steps(node: Mapping[str, Any], schema: Schema) -> Schema:
    for child in node["children"]:
        schema = project(child, schema)
    return schema


def _projected(base: Schema, right: Mapping[str, Any], of: Callable[[Schema], Schema],
               kind: str) -> Schema:
    """A projection over ``base`` (``of`` gives its element schema): null results dropped."""
    if kind not in types_of(base):
        return NULL
    item = without_null(project(right, of(base)))
    result: dict[str, Any] = {"type": "array", "items": item}
    if kind == "array" and isinstance(base, Mapping) and "maxItems" in base:
        result["maxItems"] = base["maxItems"]
    return result if types_of(base) <= {kind} else nullable(result)


def _projection(node: Mapping[str, Any], schema: Schema) -> Schema:
    left, right = node["children"]
    return _projected(project(left, schema), right, elements, "array")


def _value_projection(node: Mapping[str, Any], schema: Schema) -> Schema:
    left, right = node["children"]
    return _projected(project(left, schema), right, _object_values, "object")


def _filter_projection(node: Mapping[str, Any], schema: Schema) -> Schema:
    left, right, _condition = node["children"]
    # The condition only keeps or drops elements: what is kept has the element schema.
    return _projected(project(left, schema), right, elements, "array")


def _object_values(schema: Schema) -> Schema:
    if not isinstance(schema, Mapping):
        return schema
    branches = _split(schema)
    if branches is not None:
        return any_of([_object_values(part) for part in branches])
    extra = schema.get("additionalProperties", True)
    return any_of([*(schema.get("properties") or {}).values(), extra])


def _flatten(node: Mapping[str, Any], schema: Schema) -> Schema:
    base = project(node["children"][0], schema)
    if "array" not in types_of(base):
        return NULL
    item = elements(base)
    item_types = types_of(item)
    if "array" not in item_types:
        flat = item
    elif item_types == {"array"}:
        flat = elements(item)
    elif isinstance(item, Mapping) and item == ANYTHING:
        flat = ANYTHING
    elif isinstance(item, Mapping) and isinstance(item.get("type"), list) and not any(
            key in item for key in (*_COMBINERS, "allOf", "enum", "const")):
        others = [name for name in item["type"] if name != "array"]
        flat = any_of([elements(item), {**item, "type": others}])
    else:
        raise CannotFollow("a flatten over items that may or may not be lists")
    result = {"type": "array", "items": flat}
    return result if types_of(base) == {"array"} else nullable(result)


def _multi_select_list(node: Mapping[str, Any], schema: Schema) -> Schema:
    parts = [project(child, schema) for child in node["children"]]
    result = {"type": "array", "prefixItems": parts, "items": False,
              "maxItems": len(parts)}
    return nullable(result) if "null" in types_of(schema) else result


def _multi_select_dict(node: Mapping[str, Any], schema: Schema) -> Schema:
    properties = {child["value"]: project(child["children"][0], schema)
                  for child in node["children"]}
    result = {"type": "object", "properties": properties, "required": list(properties),
              "additionalProperties": False}
    return nullable(result) if "null" in types_of(schema) else result


def _literal(node: Mapping[str, Any], schema: Schema) -> Schema:
    return {"const": node["value"]}


def _comparator(node: Mapping[str, Any], schema: Schema) -> Schema:
    return BOOLEAN if node["value"] in {"eq", "ne"} else nullable(BOOLEAN)


def _either(node: Mapping[str, Any], schema: Schema) -> Schema:
    return any_of([project(child, schema) for child in node["children"]])


def _function(node: Mapping[str, Any], schema: Schema) -> Schema:
    name = node["value"]
    arguments = node["children"]
    fixed = _FUNCTION_RESULTS.get(name)
    if fixed is not None:
        return fixed
    if name in {"sort", "reverse", "sort_by"} and arguments:
        # Given null, these raise a type error: what they return is their non-null input.
        return without_null(project(arguments[0], schema))
    if name == "not_null":
        # The first argument that is not null, or null when every one is.
        return nullable(without_null(any_of([project(child, schema) for child in arguments])))
    if name in {"max", "min"} and arguments:
        return nullable(elements(project(arguments[0], schema)))
    if name in {"max_by", "min_by"} and arguments:
        return nullable(elements(project(arguments[0], schema)))
    if name == "values" and arguments:
        return {"type": "array", "items": _object_values(project(arguments[0], schema))}
    if name == "map" and len(arguments) == 2 and arguments[0]["type"] == "expref":
        items = elements(project(arguments[1], schema))
        return {"type": "array", "items": project(arguments[0]["children"][0], items)}
    raise CannotFollow(f"the expression calls {name}()")


_FUNCTION_RESULTS: dict[str, Schema] = {
    "length": {"type": "integer", "minimum": 0},
    "to_string": {"type": "string"}, "join": {"type": "string"}, "type": {"type": "string"},
    "to_number": {"type": ["number", "null"]},
    "keys": {"type": "array", "items": {"type": "string"}},
    "contains": BOOLEAN, "starts_with": BOOLEAN, "ends_with": BOOLEAN,
    "abs": {"type": "number"}, "ceil": {"type": "integer"}, "floor": {"type": "integer"},
    "sum": {"type": "number"}, "avg": {"type": ["number", "null"]},
    "merge": {"type": "object"}, "to_array": {"type": "array"},
}

_HANDLERS: dict[str, Callable[[Mapping[str, Any], Schema], Schema]] = {
    "field": _field,
    "index": _index,
    "slice": _slice,
    "current": lambda node, schema: schema,
    "identity": lambda node, schema: schema,
    "subexpression": _steps,
    "index_expression": _steps,
    "pipe": _steps,
    "projection": _projection,
    "value_projection": _value_projection,
    "filter_projection": _filter_projection,
    "flatten": _flatten,
    "multi_select_list": _multi_select_list,
    "multi_select_dict": _multi_select_dict,
    "literal": _literal,
    "comparator": _comparator,
    "not_expression": lambda node, schema: BOOLEAN,
    "or_expression": _either,
    "and_expression": _either,
    "function_expression": _function,
}
