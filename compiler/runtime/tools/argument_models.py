"""Pydantic argument models built from a tool's final ``input_schema``.

LangChain passes a dict ``args_schema`` through unvalidated, so every api tool (and every
plugin tool whose schema an override changed) gets a generated pydantic model: a bad
argument is refused before any request. Only what such a model can enforce is accepted;
:func:`unsupported_schema_features` lists the rest, and the compiler calls it to check
that an overridden schema can still be expressed.

A model's validator is built when it first validates (pydantic's ``defer_build``): that
is most of a model's cost, and a resolve makes one model per api tool while an agent calls
a few of them. Only a schema :func:`builds_cleanly` says cannot fail to build is deferred;
any other is built at once, so a schema pydantic cannot enforce fails where it always did.

The model validates; it is not what the LLM is shown. LangChain rebuilds a subset model
for ``tool_call_schema`` and loses aliases and constraints on the way, so the tools show
the declared schema itself (see ``declared_tool``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:
    # pydantic is imported where a model is made: the compiler calls
    # unsupported_schema_features on every compile, and importing pydantic costs it ~35 ms.
    from pydantic import BaseModel, ValidationError

SCALAR_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
ANNOTATION_KEYWORDS = frozenset({"description", "title", "examples", "default"})
SCALAR_KEYWORDS = frozenset(
    {"type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
     "maxLength", "pattern"}
) | ANNOTATION_KEYWORDS
ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"}) | ANNOTATION_KEYWORDS
OBJECT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "description", "title", "$schema"}
)
NUMERIC_CONSTRAINTS = {"minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt",
                       "exclusiveMaximum": "lt"}


@dataclass(frozen=True, slots=True)
class ArgumentModel:
    """A generated model and, per model field, the argument name it stands for."""

    model: type[BaseModel]
    argument_names: Mapping[str, str]

    def arguments(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Validated field values keyed by argument name; omitted optionals (None) dropped."""
        return {
            self.argument_names.get(name, name): value
            for name, value in fields.items()
            if value is not None
        }


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
    required = input_schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        problems.append("required must be a list of property names")
    else:
        problems += [f"required property {name!r} is not in properties"
                     for name in required if name not in properties]
    for name, schema in properties.items():
        problems += [f"property {name!r}: {problem}" for problem in _property_problems(schema)]
    return problems


def build_argument_model(tool_name: str, input_schema: Mapping[str, Any]) -> ArgumentModel:
    """The pydantic model of ``input_schema``; ValueError lists what cannot be expressed."""
    from pydantic import ConfigDict, create_model

    problems = unsupported_schema_features(input_schema)
    if problems:
        raise ValueError(
            f"input schema of {tool_name!r} cannot be enforced: " + "; ".join(problems)
        )
    properties: Mapping[str, Any] = input_schema.get("properties", {})
    required = set(input_schema.get("required", []))
    fields: dict[str, Any] = {}
    argument_names: dict[str, str] = {}
    prefix = field_name_prefix(properties)
    for index, (name, schema) in enumerate(properties.items()):
        field_name = f"{prefix}{index}"
        argument_names[field_name] = name
        fields[field_name] = _field(name, schema, name in required)
    model = create_model(
        _model_name(tool_name),
        __config__=ConfigDict(extra="forbid", populate_by_name=False,
                              defer_build=builds_cleanly(input_schema)),
        __doc__=input_schema.get("description"),
        **fields,
    )
    return ArgumentModel(model=model, argument_names=argument_names)


def builds_cleanly(input_schema: Mapping[str, Any]) -> bool:
    """Whether the model of a supported ``input_schema`` is sure to build its validator.

    Conservative: every constraint has the type pydantic expects where pydantic applies
    it, descriptions are text, and every pattern compiles in pydantic-core's own regex
    engine (which refuses some patterns Python's accepts, such as look-arounds).
    """
    pattern_runs = pattern_compiles
    properties = input_schema.get("properties", {})
    for schema in properties.values():
        if not _clean_description(schema):
            return False
        if schema.get("type") == "array":
            if not (_length(schema, "minItems") and _length(schema, "maxItems")
                    and _clean_scalar(schema["items"], pattern_runs)
                    and _clean_description(schema["items"])):
                return False
        elif not _clean_scalar(schema, pattern_runs):
            return False
    return True


def _clean_scalar(schema: Mapping[str, Any], pattern_runs: Any) -> bool:
    kind = schema["type"]
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
    return pattern is None or bool(pattern_runs(pattern))


def _length(schema: Mapping[str, Any], name: str) -> bool:
    value = schema.get(name)
    return value is None or (type(value) is int and value >= 0)


def _clean_description(schema: Mapping[str, Any]) -> bool:
    return isinstance(schema.get("description"), str | None)


def validation_summary(error: ValidationError, limit: int = 5) -> str:
    """A short ``field: problem`` list of a ValidationError, for the model to act on."""
    parts = []
    for detail in error.errors()[:limit]:
        location = ".".join(str(part) for part in detail["loc"]) or "arguments"
        parts.append(f"{location}: {detail['msg']}")
    if len(error.errors()) > limit:
        parts.append(f"and {len(error.errors()) - limit} more")
    return "; ".join(parts)


def _property_problems(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return ["must be a schema mapping"]
    kind = schema.get("type")
    if kind == "array":
        problems = [f"keyword {key!r} is not supported on arrays"
                    for key in sorted(set(schema) - ARRAY_KEYWORDS)]
        items = schema.get("items")
        if not isinstance(items, Mapping) or items.get("type") not in SCALAR_TYPES:
            return [*problems, "array items must be a string, integer, number or boolean schema"]
        problems += [f"items: {problem}" for problem in _scalar_problems(items)]
        return problems + _default_problems(schema)
    return _scalar_problems(schema) + _default_problems(schema)


def _scalar_problems(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if kind not in SCALAR_TYPES:
        return [f"type {kind!r} is not supported (use string, integer, number, boolean or an "
                "array of those)"]
    problems = [
        f"keyword {key!r} is not supported" for key in sorted(set(schema) - SCALAR_KEYWORDS)
    ]
    enum = schema.get("enum")
    if enum is not None:
        if not isinstance(enum, list) or not enum:
            problems.append("enum must be a non-empty list")
        elif not all(_matches_type(value, kind) for value in enum):
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
    kind = schema.get("type")
    default = schema["default"]
    if kind == "array":
        item_kind = schema.get("items", {}).get("type")
        ok = isinstance(default, list) and all(_matches_type(value, item_kind) for value in default)
    else:
        ok = _matches_type(default, kind)
    return [] if ok else [f"default {default!r} is not of type {kind}"]


def _matches_type(value: Any, kind: Any) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return kind == "string" and isinstance(value, str)


def _field(name: str, schema: Mapping[str, Any], required: bool) -> tuple[Any, Any]:
    from pydantic import Field

    if schema.get("type") == "array":
        annotation: Any = list[_scalar_annotation(schema["items"])]  # type: ignore[misc]
        constraints = {"min_length": schema.get("minItems"), "max_length": schema.get("maxItems")}
    else:
        annotation = _scalar_annotation(schema)
        constraints = {}
    info: dict[str, Any] = {
        "alias": name,
        "description": schema.get("description"),
        **{key: value for key, value in constraints.items() if value is not None},
    }
    if required:
        return annotation, Field(..., **info)
    if schema.get("default") is not None:
        return annotation, Field(default=copy.deepcopy(schema["default"]), **info)
    return annotation | None, Field(default=None, **info)


def _scalar_annotation(schema: Mapping[str, Any]) -> Any:
    from pydantic import BeforeValidator, Field

    kind = schema["type"]
    base: Any = SCALAR_TYPES[kind]
    if schema.get("enum"):
        base = Literal[tuple(schema["enum"])]
    constraints: dict[str, Any] = {
        keyword_name: schema[json_name]
        for json_name, keyword_name in NUMERIC_CONSTRAINTS.items()
        if json_name in schema
    }
    if "minLength" in schema:
        constraints["min_length"] = schema["minLength"]
    if "maxLength" in schema:
        constraints["max_length"] = schema["maxLength"]
    if "pattern" in schema:
        constraints["pattern"] = schema["pattern"]
    validators: list[Any] = []
    if kind in ("integer", "number"):
        # pydantic's lax mode reads True as 1; an LLM sending a boolean for a count is a bug.
        validators.append(BeforeValidator(_refuse_boolean))
    if constraints:
        validators.append(Field(**constraints))
    return Annotated[(base, *validators)] if validators else base


def _refuse_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


def field_name_prefix(argument_names: Iterable[str]) -> str:
    """The prefix of the Python-side field names: one no declared argument name starts with.

    No declared name is ever a Python identifier here. Python (``self``, keywords),
    pydantic (``model_config``, ``Config``, ``schema``...), LangChain (``config``,
    ``run_manager``, ``callbacks``...) and LangGraph (``runtime``...) each claim names of
    their own, and a field named like one of them is lost or crashes the call. A field is
    ``argument_<index>`` aliased to its declared name: the model sees and sends the
    declared name, the executor maps it back (:meth:`ArgumentModel.arguments`).
    """
    names = list(argument_names)
    prefix = "argument_"
    while any(name.startswith(prefix) for name in names):
        prefix = prefix[:-1] + "x_"
    return prefix


def _model_name(tool_name: str) -> str:
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", tool_name) or "tool"
    return f"{cleaned}_arguments"
