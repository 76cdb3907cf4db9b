"""Semantic checks of a parameter entry's values (SPEC §10): its ``pattern``, ``default``
and ``enum`` values, each checked against the entry's own schema (nested) with the argument
model the runtime validates calls with. ``checks/parameter_rules.py`` runs them for an entry
that has those keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.runtime.manifest.parameters import STRUCTURED_TYPES, ParameterNode, parameter_schema
from compiler.source.documents import SourceDocument

API_DEFAULT_ENUM = Code("api-default-enum", "a parameter's default is not one of its enum values")
API_DEFAULT_TYPE = Code("api-default-type", "a parameter's default is not of its type")
API_ENUM_TYPE = Code("api-enum-type", "an enum value is not of the parameter's type")
API_PARAMETER_PATTERN = Code("api-parameter-pattern", "a parameter pattern is unsafe or invalid")
API_REQUIRED_DEFAULT = Code(
    "api-required-default", "a required parameter has a default (it is never missing)",
    Severity.WARNING)
CODES = (
    API_DEFAULT_ENUM, API_DEFAULT_TYPE, API_ENUM_TYPE, API_PARAMETER_PATTERN, API_REQUIRED_DEFAULT,
)

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}
_CONSTRAINTS = ("minimum", "maximum", "min_length", "max_length", "pattern", "min_items",
                "max_items", "format")


def check_pattern(document: SourceDocument, node: ParameterNode) -> list[Diagnostic]:
    """A parameter's ``pattern``: a regular expression the argument model's linear-time
    engine runs (no look-arounds or backreferences)."""
    pattern = node.spec.get("pattern")
    if not isinstance(pattern, str):
        return []
    from compiler.runtime.tools.argument_schemas import pattern_compiles

    try:
        re.compile(pattern)
    except re.error as error:
        return [_error(document, (*node.path, "pattern"), API_PARAMETER_PATTERN,
                       f"pattern of {node.field} is not a regular expression: {error}")]
    if not pattern_compiles(pattern):
        # The argument model's engine (linear time, no backtracking) refuses it.
        return [_error(document, (*node.path, "pattern"), API_PARAMETER_PATTERN,
                       f"pattern of {node.field} uses look-arounds or backreferences, which "
                       "the linear-time regex engine of argument validation does not run")]
    return []


def check_values(document: SourceDocument, node: ParameterNode, kind: str
                  ) -> list[Diagnostic]:
    """``default`` and each ``enum`` value must be valid for the entry (types first, with
    the historic messages; then every constraint, nested, with the entry's own schema)."""
    spec = node.spec
    found: list[Diagnostic] = []
    nullable = bool(spec.get("nullable", False))
    accepted = _PYTHON_TYPES.get(kind, (str,))
    # (where in the entry, the value): a value's path is made only for a finding.
    values: list[tuple[tuple[str | int, ...], Any]] = []
    if "default" in spec:
        values.append((("default",), spec["default"]))
    enum = spec.get("enum")
    if isinstance(enum, list):
        values += [(("enum", index), value) for index, value in enumerate(enum)]
    # Built only when there is a value to check: an object entry builds the model of its
    # whole subtree, and every nested entry is checked (quadratic on deep documents).
    checker = _ValueChecker(spec) if values and _needs_model(spec, kind) else None
    for where, value in values:
        if value is None and nullable:
            continue
        label, code = (("default", API_DEFAULT_TYPE) if where[0] == "default"
                       else ("enum value", API_ENUM_TYPE))
        if not _matches(value, accepted):
            found.append(_error(document, (*node.path, *where), code,
                                f"{label} {value!r} is not of type {kind}"))
            continue
        problem = checker.problem(value, node.field) if checker is not None else None
        if problem is not None:
            found.append(_error(document, (*node.path, *where), code,
                                f"{label} {value!r} is not valid for {node.field}: {problem}"))
    if "default" in spec and isinstance(enum, list) and spec["default"] not in enum:
        shown = ", ".join(json.dumps(value, ensure_ascii=False, default=str)
                          for value in enum[:20])
        more = f" and {len(enum) - 20} more" if len(enum) > 20 else ""
        default = json.dumps(spec["default"], ensure_ascii=False, default=str)
        found.append(_error(document, (*node.path, "default"), API_DEFAULT_ENUM,
                            f"default {default} is not one of the enum values: {shown}{more}"))
    if spec.get("required") is True and "default" in spec:
        # The default makes the argument optional for the model (the schema's "required"
        # leaves it out), so "required" does not do what it says.
        found.append(Diagnostic.warning(
            document.location((*node.path, "required")), API_REQUIRED_DEFAULT,
            "required: true with a default: the model may leave the argument out and the "
            "default is sent; remove `required` or the default"))
    return found


def _needs_model(spec: Mapping[str, Any], kind: str) -> bool:
    return kind in STRUCTURED_TYPES or not spec.keys().isdisjoint(_CONSTRAINTS)


class _ValueChecker:
    """Validates values against one entry's schema with its argument model (built once per
    entry; its regex engine runs in linear time, so a hostile pattern cannot hang this)."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        from compiler.runtime.tools.argument_models import build_argument_model

        schema = {key: item for key, item in parameter_schema(spec).items()
                  if key not in ("default", "enum")}
        input_schema = {"type": "object", "properties": {"value": schema},
                        "required": ["value"], "additionalProperties": False}
        try:
            self._model: Any = build_argument_model("value_check", input_schema).model
        except ValueError:
            self._model = None  # the schema itself is reported by the other checks

    def problem(self, value: Any, field: str) -> str | None:
        """Why ``value`` of ``field`` fails the entry's schema, or None."""
        from pydantic import ValidationError

        from compiler.runtime.tools.argument_models import validation_summary

        if self._model is None:
            return None
        try:
            self._model.model_validate({"value": value})
        except ValidationError as error:
            parts = validation_summary(error).split("; ")
            return "; ".join(field + part.removeprefix("value") if part.startswith("value")
                             else part for part in parts)
        except TypeError:
            # A constraint of another type (``minimum`` on a string): pydantic cannot apply
            # it, and _check_node reports the keyword (api-parameter-keyword).
            return None
        return None


def _matches(value: Any, accepted: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in accepted
    return isinstance(value, accepted)


def _error(document: SourceDocument, path: tuple[str | int, ...], code: Code, message: str
           ) -> Diagnostic:
    return Diagnostic.error(document.location(path), code, message)
