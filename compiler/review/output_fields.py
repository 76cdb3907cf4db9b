"""The fields of an output schema, as ``capc docs`` shows them and ``capc diff`` compares them.

A field is a path into the tool's result (``items[].id``; ``@`` is the result itself) and
the JSON types it may have there. ``anyOf``/``oneOf`` branches add their types to the same
paths. A removed field, or one that may now have a type it could not have before (null
included), breaks what a consumer of the result relies on: a contract change (SPEC §16).
An added field, or a narrower type, does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler.output_projection import types_of

# A catalogue lists at most this many fields of one tool, this deep.
MAX_FIELDS = 500
MAX_DEPTH = 16
ROOT = "@"


def output_fields(schema: Any) -> dict[str, frozenset[str]]:
    """``{path: types}`` of every field ``schema`` describes (bounded, in schema order)."""
    fields: dict[str, set[str]] = {}
    pending: list[tuple[str, Any, int]] = [(ROOT, schema, 0)]
    while pending and len(fields) < MAX_FIELDS:
        path, node, depth = pending.pop(0)
        types = set(types_of(node))
        if "number" in types and _integer_only(node):
            types = (types - {"number"}) | {"integer"}
        fields.setdefault(path, set()).update(types)
        if not isinstance(node, Mapping) or depth >= MAX_DEPTH:
            continue
        for combiner in ("anyOf", "oneOf", "allOf"):
            for part in node.get(combiner) or ():
                pending.append((path, part, depth + 1))
        for name, child in (node.get("properties") or {}).items():
            pending.append((_child(path, name), child, depth + 1))
        for index, child in enumerate(node.get("prefixItems") or ()):
            pending.append((f"{_prefix(path)}[{index}]", child, depth + 1))
        items = node.get("items")
        if isinstance(items, Mapping) and items:
            pending.append((f"{_prefix(path)}[]", items, depth + 1))
    return {path: frozenset(types) for path, types in fields.items()}


def _integer_only(node: Any) -> bool:
    kind = node.get("type") if isinstance(node, Mapping) else None
    named = {kind} if isinstance(kind, str) else set(kind or ())
    return "integer" in named and "number" not in named


def _prefix(path: str) -> str:
    return "" if path == ROOT else path


def _child(path: str, name: str) -> str:
    key = name if name.isidentifier() else f'"{name}"'
    return key if path == ROOT else f"{path}.{key}"


def type_text(types: Iterable[str]) -> str:
    """``integer or null``: the types of a field, in a fixed order (no ``|``: the text
    goes into Markdown tables)."""
    order = ("object", "array", "string", "integer", "number", "boolean", "null")
    named = set(types)
    if set(order) - {"integer"} <= named:
        return "any"
    return " or ".join(name for name in order if name in named) or "nothing"


def contract_changes(before: Any, after: Any) -> list[str]:
    """What consumers of a tool's result lose from ``before`` to ``after`` (output schemas;
    None: text only), one sentence each."""
    if before is None:
        return []
    if after is None:
        return ["the tool no longer returns structured output (its output schema is gone)"]
    old, new = output_fields(before), output_fields(after)
    changes = []
    for path, types in old.items():
        if path not in new:
            changes.append(f"output field {path} was removed")
        elif not _within(new[path], types):
            changes.append(f"output field {path} changed type from {type_text(types)} to "
                           f"{type_text(new[path])}")
    return changes


def _within(new: frozenset[str], old: frozenset[str]) -> bool:
    widened = set(new) - set(old)
    return not widened or (widened == {"integer"} and "number" in old)
