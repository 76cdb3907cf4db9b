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

Arrays and objects nest (SPEC §10): an object is a nested model (closed), an open map a
``dict``, and every level keeps the aliasing of the top one, so no declared name at any
depth can collide with a Python, pydantic or LangChain name. Each model comes with its
:class:`Shape`, which turns validated values back into the JSON the request carries:
declared names, defaults filled in, and fields the model did not send left out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from compiler.runtime.tools.argument_schemas import (
    NUMERIC_CONSTRAINTS,
    SCALAR_TYPES,
    builds_cleanly,
    pattern_compiles,
    schema_type,
    unsupported_schema_features,
)

if TYPE_CHECKING:
    # pydantic is imported where a model is made: the compiler calls
    # unsupported_schema_features on every compile, and importing pydantic costs it ~35 ms.
    from pydantic import BaseModel, ValidationError

__all__ = [
    "ArgumentModel", "Shape", "build_argument_model", "builds_cleanly", "field_name_prefix",
    "pattern_compiles", "unsupported_schema_features", "validation_summary",
]


class _NotGiven:
    """The default of an optional field without one: "left out", told apart from null."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = _NotGiven()


@dataclass(frozen=True, slots=True)
class FieldShape:
    """One field of an object: its declared name and how its value is written back."""

    alias: str
    # Whether null is "not sent" here: the field is not nullable (null is no value of its
    # own), or the tool is strict and the field optional (OpenAI strict sends every field).
    drop_null: bool
    shape: Shape | None = None


@dataclass(frozen=True, slots=True)
class Shape:
    """How a validated value is turned back into JSON (None: a scalar, as it is)."""

    fields: Mapping[str, FieldShape] = field(default_factory=dict)
    items: Shape | None = None
    values: Shape | None = None  # the values of an open map
    defaults: Mapping[str, Any] = field(default_factory=dict)  # declared name -> default

    def plain(self, value: Any) -> Any:
        """``value`` (models, lists, dicts) as JSON with declared names."""
        if value is None:
            return None
        if self.items is not None and isinstance(value, list | tuple):
            return [self.items.plain(item) for item in value]
        if isinstance(value, dict):
            return {key: _plain(self.values, item) for key, item in value.items()}
        if self.fields:
            return self.object_json(value)
        return value

    def object_json(self, model: Any) -> dict[str, Any]:
        """A validated nested model as a JSON object (left-out fields stay out)."""
        written: dict[str, Any] = {}
        for name, described in self.fields.items():
            item = getattr(model, name)
            if item is NOT_GIVEN or (item is None and described.drop_null):
                continue
            written[described.alias] = _plain(described.shape, item)
        extra = model.__pydantic_extra__
        if extra:
            written.update((key, _plain(self.values, item)) for key, item in extra.items())
        return written


def _plain(shape: Shape | None, value: Any) -> Any:
    return value if shape is None else shape.plain(value)


@dataclass(frozen=True, slots=True)
class ArgumentModel:
    """A generated model and, per model field, the argument name it stands for."""

    model: type[BaseModel]
    argument_names: Mapping[str, str]
    shape: Shape = Shape()

    def arguments(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Validated field values keyed by argument name, as JSON; fields left out (and
        null where null is not a value of its own) dropped."""
        found: dict[str, Any] = {}
        described = self.shape.fields
        for name, value in fields.items():
            field_shape = described.get(name)
            if value is NOT_GIVEN or (value is None and (
                    field_shape is None or field_shape.drop_null)):
                continue
            found[self.argument_names.get(name, name)] = _plain(
                field_shape.shape if field_shape else None, value)
        return found


def build_argument_model(
    tool_name: str, input_schema: Mapping[str, Any], strict: bool = False
) -> ArgumentModel:
    """The pydantic model of ``input_schema``; ValueError lists what cannot be expressed.

    ``strict``: the tool is shown in strict form, where the model sends every field and
    null means "not sent" for the optional ones.
    """
    problems = unsupported_schema_features(input_schema)
    if problems:
        raise ValueError(
            f"input schema of {tool_name!r} cannot be enforced: " + "; ".join(problems)
        )
    builder = _ModelBuilder(strict, defer=builds_cleanly(input_schema))
    model, shape = builder.object_model(_model_name(tool_name), input_schema, top=True)
    argument_names = {name: described.alias for name, described in shape.fields.items()}
    return ArgumentModel(model=model, argument_names=argument_names, shape=shape)


@dataclass(frozen=True, slots=True)
class _ModelBuilder:
    strict: bool
    defer: bool

    def object_model(self, name: str, schema: Mapping[str, Any], top: bool = False
                     ) -> tuple[Any, Shape]:
        from pydantic import ConfigDict, create_model

        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        extra_schema = schema.get("additionalProperties", False)
        values_annotation, values_shape = (
            self.annotation(f"{name}_value", extra_schema)
            if isinstance(extra_schema, Mapping) else (None, None))
        fields: dict[str, Any] = {}
        shapes: dict[str, FieldShape] = {}
        prefix = field_name_prefix(properties)
        for index, (declared, child) in enumerate(properties.items()):
            field_name = f"{prefix}{index}"
            annotation, child_shape = self.annotation(f"{name}_{index}", child)
            _, nullable = schema_type(child)
            is_required = declared in required
            fields[field_name] = _field(declared, child, annotation, is_required)
            shapes[field_name] = FieldShape(
                declared, not nullable or (self.strict and not is_required), child_shape)
        config = ConfigDict(extra="forbid" if values_annotation is None else "allow",
                            populate_by_name=False, defer_build=self.defer)
        model = create_model(name, __config__=config, __doc__=schema.get("description"),
                             **fields)
        if values_annotation is not None:
            model = _with_typed_extra(model, values_annotation)
        return model, Shape(fields=shapes, values=values_shape)

    def annotation(self, name: str, schema: Mapping[str, Any]) -> tuple[Any, Shape | None]:
        kind, nullable = schema_type(schema)
        shape: Shape | None = None
        if kind == "array":
            item, item_shape = self.annotation(f"{name}_item", schema["items"])
            annotation: Any = list[item]  # type: ignore[valid-type]
            shape = Shape(items=item_shape or Shape())
        elif kind == "object" and schema.get("properties"):
            annotation, shape = self.object_model(name, schema)
        elif kind == "object":
            extra = schema.get("additionalProperties", False)
            value, value_shape = (self.annotation(f"{name}_value", extra)
                                  if isinstance(extra, Mapping) else (Any, None))
            annotation = dict[str, value]  # type: ignore[valid-type]
            if extra is False:  # a closed object without fields: only {}
                annotation = Annotated[annotation, _max_length(0)]
            shape = Shape(values=value_shape)
        else:
            annotation = _scalar_annotation(schema)
        return (annotation | None if nullable else annotation), shape


def _with_typed_extra(model: Any, values: Any) -> Any:
    """``model`` whose extra keys (an object with fields and an open map) are validated
    as ``values``: pydantic reads the type of extras from this annotation."""
    from pydantic import Field

    namespace = {"__annotations__": {"__pydantic_extra__": dict[str, values]},
                 "__pydantic_extra__": Field(init=False), "__module__": model.__module__}
    return type(model.__name__, (model,), namespace)


def _max_length(limit: int) -> Any:
    from pydantic import Field

    return Field(max_length=limit)


def validation_summary(error: ValidationError, limit: int = 5) -> str:
    """A short ``field: problem`` list of a ValidationError, for the model to act on; the
    field is a path in the declared names (``items[0].quantity``)."""
    parts = []
    details = error.errors()
    for detail in details[:limit]:
        parts.append(f"{field_path(detail['loc'])}: {detail['msg']}")
    if len(details) > limit:
        parts.append(f"and {len(details) - limit} more")
    return "; ".join(parts)


def field_path(location: Iterable[Any]) -> str:
    """``("items", 0, "quantity")`` as ``items[0].quantity`` (``arguments`` when empty)."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "arguments"


def _field(name: str, schema: Mapping[str, Any], annotation: Any, required: bool
           ) -> tuple[Any, Any]:
    from pydantic import Field, WrapSerializer

    kind, _ = schema_type(schema)
    constraints = ({"min_length": schema.get("minItems"), "max_length": schema.get("maxItems")}
                   if kind == "array" else {})
    info: dict[str, Any] = {
        "alias": name,
        "description": schema.get("description"),
        **{key: value for key, value in constraints.items() if value is not None},
    }
    if required:
        return annotation, Field(..., **info)
    if schema.get("default") is not None:
        return annotation, Field(default=copy.deepcopy(schema["default"]), **info)
    # Optional: null is accepted (and, unless nullable, means "not sent"); left out is
    # NOT_GIVEN, so a nullable field's explicit null is still told apart.
    # A factory, not a default: pydantic would try to put a default in the JSON schema;
    # and a dump (LangChain makes one) writes NOT_GIVEN as null.
    optional = Annotated[annotation | None, WrapSerializer(_dump_not_given)]
    return optional, Field(default_factory=_not_given, **info)


def _not_given() -> _NotGiven:
    return NOT_GIVEN


def _dump_not_given(value: Any, dump: Any) -> Any:
    return None if value is NOT_GIVEN else dump(value)


def _scalar_annotation(schema: Mapping[str, Any]) -> Any:
    from pydantic import BeforeValidator, Field

    kind, _ = schema_type(schema)
    base: Any = SCALAR_TYPES[kind]
    enum = [value for value in schema.get("enum") or () if value is not None]
    if enum:
        base = Literal[tuple(enum)]
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
