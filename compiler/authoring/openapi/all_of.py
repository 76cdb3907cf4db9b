"""``allOf`` merging for the OpenAPI import (SPEC §11 "allOf merged").

A value valid for the document satisfies every part of an ``allOf``, so the merged
schema keeps every part's restriction: the tightest of two bounds, the values two enums
share. What cannot be merged (two types, two patterns) keeps the first part's and is
said in a note, never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compiler.authoring.openapi.refs import Target

UPPER_BOUNDS = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems",
                          "maxProperties"})
LOWER_BOUNDS = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems",
                          "minProperties"})
# Words that never restrict a value: the first part's is kept without a note.
FREE_WORDS = frozenset({"description", "title", "example", "examples", "default",
                        "deprecated", "externalDocs", "xml", "discriminator"})


def combined_keyword(key: str, known: Any, value: Any) -> tuple[Any, str | None]:
    """The merged value of ``key`` written ``known`` by one part and ``value`` by a later
    one, and a note when something could not be kept."""
    if known == value or key in FREE_WORDS or _has_target(known) or _has_target(value):
        return known, None  # sub-schemas (items, oneOf...) stay the first part's
    numbers = _is_number(known) and _is_number(value)
    if key in UPPER_BOUNDS and numbers:
        return min(known, value), None
    if key in LOWER_BOUNDS and numbers:
        return max(known, value), None
    if key == "enum" and isinstance(known, list) and isinstance(value, list):
        common = _common(known, value)
        if common:
            return common, None
        return known, "allOf parts allow no common enum value; the first part's kept"
    return known, (f"allOf parts disagree on {key} ({_shown(known)} / {_shown(value)}); "
                   "the first is kept")


def _common(known: list[Any], value: list[Any]) -> list[Any]:
    """The items of ``known`` that ``value`` has too, in linear time (a set of ``value``'s
    items by type and value; lists and mappings compared as their JSON text)."""
    wanted = {_identity(item) for item in value}
    return [item for item in known if _identity(item) in wanted]


def _identity(item: Any) -> tuple[str, Any]:
    if isinstance(item, (list, dict)):
        return "json", json.dumps(item, sort_keys=True, default=str)
    # 1 and True are equal in Python, not in JSON: the type keeps them apart.
    return type(item).__name__, item


def merged_parts(value: Any) -> list[Any]:
    """The schemas a merged property already combines (one, or its allOf's parts)."""
    if isinstance(value, Mapping) and set(value) == {"allOf"} and isinstance(value["allOf"], list):
        return list(value["allOf"])
    return [value]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_target(value: Any) -> bool:
    return isinstance(value, Target) or (isinstance(value, list)
                                         and any(isinstance(item, Target) for item in value))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
