"""Strict tool calling (SPEC §10): the strict form of a schema, and what keeps one from it.

OpenAI strict function calling and Anthropic strict tool use both decode the model's
arguments with a grammar built from the tool's schema, and both accept only part of JSON
Schema: every object closed and every property listed in ``required`` (an optional one is
shown nullable, and null means "not sent"); OpenAI bounds nesting, property and enum
counts; Anthropic takes only primitive enum values. Constraints neither grammar is sure to
take (``default``, lengths, bounds, patterns, most formats) move into the description as
words, where the model still reads them, and the argument model still enforces them before
any request.

:func:`strict_problems` is the one list of reasons, per provider: the compiler refuses a
``strict: true`` tool with one, and ``capc validate --format json`` reports them for every
tool. :func:`provider_tools` hands a provider the strict definitions of strict tools.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PROVIDERS", "StrictProblem", "provider_tools", "strict_form", "strict_problems"]

PROVIDERS = ("openai", "anthropic")
# Limits OpenAI documents for strict schemas.
OPENAI_MAX_NESTING = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
# Formats both strict grammars take; any other is described in words.
SHARED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname",
                            "ipv4", "ipv6", "uuid"})
_KEPT = frozenset({"type", "description", "properties", "required", "additionalProperties",
                   "items", "enum", "format"})
_IN_WORDS = {
    "default": "Default: {}.", "minimum": "At least {}.", "maximum": "At most {}.",
    "exclusiveMinimum": "More than {}.", "exclusiveMaximum": "Less than {}.",
    "minLength": "At least {} characters.", "maxLength": "At most {} characters.",
    "pattern": "Matches the regular expression {}.", "minItems": "At least {} items.",
    "maxItems": "At most {} items.", "format": "Format: {}.",
}
NULL = "null"


@dataclass(frozen=True, slots=True)
class StrictProblem:
    """Why one provider's strict mode cannot take a schema, at a field path (``""``: the
    whole schema)."""

    provider: str
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"{where}{self.reason}"


def strict_problems(input_schema: Mapping[str, Any]) -> list[StrictProblem]:
    """Every reason a provider's strict mode cannot take ``input_schema`` (empty: both can)."""
    found: list[StrictProblem] = []
    properties = enum_values = 0
    deepest = ("", 0)
    for field, depth, node in _nodes(input_schema):
        if not isinstance(node, Mapping):
            continue
        kind = _kind(node)
        if kind == "object":
            extra = node.get("additionalProperties", False)
            if extra is not False:
                found += [StrictProblem(provider, field, "an open map (any key): strict mode "
                                        "needs every object closed, with its fields listed")
                          for provider in PROVIDERS]
            properties += len(node.get("properties") or {})
            if depth > deepest[1]:
                deepest = (field, depth)
        enum = node.get("enum")
        if isinstance(enum, list | tuple):
            enum_values += len(enum)
            if any(isinstance(value, list | tuple | Mapping) for value in enum):
                found.append(StrictProblem("anthropic", field, "enum values must be strings, "
                                           "numbers, booleans or null"))
    if deepest[1] > OPENAI_MAX_NESTING:
        found.append(StrictProblem("openai", deepest[0], f"objects nest {deepest[1]} levels "
                                   f"deep; OpenAI strict mode allows {OPENAI_MAX_NESTING}"))
    if properties > OPENAI_MAX_PROPERTIES:
        found.append(StrictProblem("openai", "", f"{properties} properties; OpenAI strict "
                                   f"mode allows {OPENAI_MAX_PROPERTIES}"))
    if enum_values > OPENAI_MAX_ENUM_VALUES:
        found.append(StrictProblem("openai", "", f"{enum_values} enum values; OpenAI strict "
                                   f"mode allows {OPENAI_MAX_ENUM_VALUES}"))
    return found


def _nodes(schema: Any) -> Iterable[tuple[str, int, Any]]:
    """``(field path, object depth, schema)`` of every schema in a tool's input schema."""
    pending: list[tuple[str, int, Any]] = [("", 1, schema)]
    while pending:
        field, depth, node = pending.pop()
        yield field, depth, node
        if not isinstance(node, Mapping):
            continue
        child_depth = depth + 1 if _kind(node) == "object" else depth
        if isinstance(node.get("items"), Mapping):
            pending.append((f"{field}[]", child_depth, node["items"]))
        if isinstance(node.get("additionalProperties"), Mapping):
            pending.append((f"{field}.*", child_depth, node["additionalProperties"]))
        for name, child in (node.get("properties") or {}).items():
            pending.append((f"{field}.{name}" if field else name, child_depth, child))


def _kind(schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list | tuple):
        others = [item for item in kind if item != NULL]
        return others[0] if len(others) == 1 else None
    return kind


def strict_form(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema shown under strict mode: every object closed with all its properties
    required, optional ones nullable, and constraints described in words."""
    return _strict_node(input_schema, optional=False)


def _strict_node(schema: Mapping[str, Any], optional: bool) -> dict[str, Any]:
    words = [_IN_WORDS[key].format(_shown(schema[key])) for key in _IN_WORDS
             if key in schema and not (key == "format" and schema[key] in SHARED_FORMATS)]
    node: dict[str, Any] = {key: copy.deepcopy(value) for key, value in schema.items()
                            if key in _KEPT and key not in ("properties", "items")}
    if node.get("format") not in SHARED_FORMATS:
        node.pop("format", None)
    if words:
        node["description"] = " ".join([*filter(None, [schema.get("description")]), *words])
    if _kind(schema) == "object":
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        node["properties"] = {name: _strict_node(child, optional=name not in required)
                              for name, child in properties.items()}
        node["required"] = list(properties)
        node["additionalProperties"] = False
    if isinstance(schema.get("items"), Mapping):
        node["items"] = _strict_node(schema["items"], optional=False)
    if optional:
        node = _nullable(node)
    return node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if isinstance(kind, str):
        node["type"] = [kind, NULL]
    elif isinstance(kind, list) and NULL not in kind:
        node["type"] = [*kind, NULL]
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    return node


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def provider_tools(tools: Iterable[Any], provider: str) -> list[Any]:
    """``tools`` for a model's ``bind_tools``: a strict api tool as the provider's own tool
    definition with ``strict: true`` (LangChain has no per-tool strict flag), others as
    they are. ``provider``: ``openai`` or ``anthropic``."""
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, not {provider!r}")
    bound: list[Any] = []
    for tool in tools:
        metadata = getattr(tool, "metadata", None) or {}
        if not metadata.get("strict"):
            bound.append(tool)
            continue
        schema = tool.tool_call_schema
        if provider == "openai":
            bound.append({"type": "function", "function": {
                "name": tool.name, "description": tool.description, "parameters": schema,
                "strict": True}})
        else:
            bound.append({"name": tool.name, "description": tool.description,
                          "input_schema": schema, "strict": True})
    return bound
