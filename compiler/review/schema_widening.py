"""Does a tool's new input schema let the model send more? (``capc diff``, SPEC §10)

Both schemas are walked together by field path (``line_items[].quantity``, ``metadata.*``)
and every node present in both is compared keyword by keyword. Like the other widening
checks, anything that cannot be proved no wider counts: an enum dropped or given new
values, a ``max*`` raised or dropped, a ``min*`` lowered or dropped, a pattern changed or
dropped, a closed object opened, null newly allowed, a type changed, a field added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems")
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems")


def schema_widenings(old: Any, new: Any) -> list[str]:
    """What in ``new`` lets the model send more than ``old`` allowed, by field path."""
    found: list[str] = []
    for field, before, after in _pairs(old, new):
        found += [f"{field or 'arguments'}: {reason}" for reason in _node_widenings(before, after)]
    return found


def _pairs(old: Any, new: Any) -> Iterator[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """``(field path, old node, new node)`` of every node both schemas have (iterative)."""
    pending: list[tuple[str, Any, Any]] = [("", old, new)]
    while pending:
        field, before, after = pending.pop()
        if not isinstance(before, Mapping) or not isinstance(after, Mapping):
            continue
        yield field, before, after
        if isinstance(before.get("items"), Mapping):
            pending.append((f"{field}[]", before["items"], after.get("items")))
        if isinstance(before.get("additionalProperties"), Mapping):
            pending.append((f"{field}.*", before["additionalProperties"],
                            after.get("additionalProperties")))
        old_properties = before.get("properties") or {}
        new_properties = after.get("properties") or {}
        if isinstance(old_properties, Mapping) and isinstance(new_properties, Mapping):
            for name in old_properties:
                if name in new_properties:
                    pending.append((f"{field}.{name}" if field else str(name),
                                    old_properties[name], new_properties[name]))


def _node_widenings(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    old_types, new_types = _types(before), _types(after)
    if old_types is not None and (new_types is None or not new_types <= old_types):
        found.append(f"type widened from {_shown(before.get('type'))} to "
                     f"{_shown(after.get('type'))}")
    if "enum" in before:
        if "enum" not in after:
            found.append("enum restriction removed")
        else:
            added = [value for value in after["enum"] if value not in before["enum"]]
            if added:
                found.append(f"enum widened with {_shown(added)}")
    for keyword in _UPPER:
        if keyword in before and (keyword not in after or _greater(after[keyword],
                                                                   before[keyword])):
            found.append(_bound_change(keyword, before, after, "raised"))
    for keyword in _LOWER:
        if keyword in before and (keyword not in after or _greater(before[keyword],
                                                                   after[keyword])):
            found.append(_bound_change(keyword, before, after, "lowered"))
    if "pattern" in before and after.get("pattern") != before["pattern"]:
        found.append("pattern removed" if "pattern" not in after else
                     f"pattern changed from {_shown(before['pattern'])} to "
                     f"{_shown(after['pattern'])}")
    if before.get("additionalProperties", False) is False and \
            after.get("additionalProperties", False) is not False:
        found.append("a closed object opened to any key")
    old_properties = before.get("properties") or {}
    new_properties = after.get("properties") or {}
    if isinstance(old_properties, Mapping) and isinstance(new_properties, Mapping):
        added_fields = sorted(set(new_properties) - set(old_properties))
        if added_fields:
            found.append(f"new field(s) {_shown(added_fields)}")
    return found


def _types(schema: Mapping[str, Any]) -> frozenset[str] | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list | tuple) and all(isinstance(item, str) for item in kind):
        return frozenset(kind)
    return None


def _greater(first: Any, second: Any) -> bool:
    try:
        return bool(first > second)
    except TypeError:
        return True  # not comparable: not provably no wider


def _bound_change(keyword: str, before: Mapping[str, Any], after: Mapping[str, Any],
                  verb: str) -> str:
    if keyword not in after:
        return f"{keyword} {_shown(before[keyword])} removed"
    return f"{keyword} {verb} from {_shown(before[keyword])} to {_shown(after[keyword])}"


def _shown(value: Any) -> str:
    return repr(value) if not isinstance(value, list) else "[" + ", ".join(map(repr, value)) + "]"


_SCHEMA_PREFIX = "tool.input_schema."


def shown_path(path: str) -> str:
    """A changed leaf of an api tool's input schema by field path, as a reviewer reads it:
    ``tool.input_schema.properties.items.items.properties.quantity.maximum`` is
    ``tool.input_schema: items[].quantity maximum``; any other path as it is."""
    if not path.startswith(_SCHEMA_PREFIX):
        return path
    parts = path[len(_SCHEMA_PREFIX):].split(".")
    field, index = "", 0
    while index < len(parts):
        part = parts[index]
        if part == "properties" and index + 1 < len(parts):
            field += f".{parts[index + 1]}" if field else parts[index + 1]
            index += 2
        elif part == "items":
            field += "[]"
            index += 1
        elif part == "additionalProperties" and index + 1 < len(parts):
            field += ".*"
            index += 1
        else:
            break
    keyword = ".".join(parts[index:])
    return f"tool.input_schema: {field or '(top)'}{' ' + keyword if keyword else ''}"
