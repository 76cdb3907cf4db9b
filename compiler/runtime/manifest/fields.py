"""The field parsers of the manifest model: strict on shape, lenient on absence.

A parser returns a field's value, its default when the key is absent, or raises
:class:`EntryShapeError` naming the field. :class:`ParseMode` is the step after the
checks: build frozen entries (:data:`BUILD`), or nothing (:data:`CHECK`, the loader's
load-time check). ``compiler.runtime.manifest.model`` composes these into entries.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar, cast

from compiler.runtime.records import record

Freeze = Callable[[Any], Any]
JsonObject = dict[str, Any]
Made = TypeVar("Made")


class EntryShapeError(ValueError):
    """A manifest field is present with the wrong shape (the message names the field)."""


# The leaves of a JSON value: returned as they are. Checked by exact type first because a
# negative isinstance against the Mapping ABC is slow, and most of a manifest is leaves.
_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})
# The containers a JSON value is made of, frozen or not: dispatched by exact type too, and
# their leaves copied inline (a call per leaf is most of the cost of a flat object).
_MAPPINGS = frozenset({dict, MappingProxyType})
_SEQUENCES = frozenset({list, tuple})


def freeze(value: Any) -> Any:
    """A deep read-only copy of a JSON value (mappings become proxies, lists tuples)."""
    kind = type(value)
    if kind in _LEAF_TYPES:
        return value
    leaves = _LEAF_TYPES
    if kind in _MAPPINGS:
        return MappingProxyType({key: item if type(item) in leaves else freeze(item)
                                 for key, item in value.items()})
    if kind in _SEQUENCES:
        return tuple([item if type(item) in leaves else freeze(item) for item in value])
    if isinstance(value, Mapping):  # other mapping types: the general (slower) check
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value: ``copy.deepcopy``'s result for JSON, without its memo
    and per-object dispatch (it runs for every keyword of every parameter). Leaves are
    immutable and shared; other types go to ``copy.deepcopy``."""
    kind = type(value)
    if kind in _LEAF_TYPES:
        return value
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    return copy.deepcopy(value)


def thaw(value: Any) -> Any:
    """A deep mutable (JSON-shaped) copy of a frozen value."""
    kind = type(value)
    if kind in _LEAF_TYPES:
        return value
    leaves = _LEAF_TYPES
    if kind in _MAPPINGS:
        return {key: item if type(item) in leaves else thaw(item)
                for key, item in value.items()}
    if kind in _SEQUENCES:
        return [item if type(item) in leaves else thaw(item) for item in value]
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(item) for item in value]
    return value


def keep(value: Any) -> Any:
    """The freezing step of a check-only parse: the value itself, uncopied."""
    return value


class Maker(Protocol):
    """Makes an entry of ``cls`` from its field values (or, checking, a placeholder)."""

    def __call__(self, cls: type[Made], /, *values: Any) -> Made: ...


def _construct(cls: type[Made], /, *values: Any) -> Made:
    return cls(*values)


def _placeholder(cls: type[Made], /, *values: Any) -> Made:
    return cast(Made, None)


@record(frozen=True, slots=True)
class ParseMode:
    """What a parse does with the fields it has checked: build frozen entries, or nothing.

    The load-time check is the same parse in :data:`CHECK` mode: every field is checked
    in the same order with the same messages, and no copy or entry is made (making them
    is most of a parse's cost). What a CHECK parse returns is a placeholder: ignore it.
    ``make`` is a plain function, not a method: it runs once per entry object, and the
    load-time check is measured against a bare JSON parse (bench figure 4).
    """

    freeze: Freeze
    make: Maker
    build: bool


BUILD = ParseMode(freeze, _construct, True)
CHECK = ParseMode(keep, _placeholder, False)


# -- field parsers: strict on shape, lenient on absence ------------------------------------

# Concrete types, not the Mapping ABC: an ABC isinstance check is several times slower, and
# the load-time check runs these once per field of every entry.
OBJECTS = (dict, MappingProxyType)
LISTS = (list, tuple)


def json_object(raw: Any, where: str) -> Mapping[str, Any]:
    """``raw`` when it is a JSON object, else EntryShapeError naming ``where``."""
    if not isinstance(raw, OBJECTS):
        raise EntryShapeError(f"{where} must be an object, not {json_type(raw)}")
    return raw


def required_string(raw: Mapping[str, Any], key: str) -> str:
    """``raw[key]``, which must be a non-empty string."""
    if key not in raw:
        raise EntryShapeError(f"missing key {key!r}")
    value = raw[key]
    if value.__class__ is not str or not value:
        raise EntryShapeError(f"{key} must be a non-empty string")
    return value


def optional_string(raw: Mapping[str, Any], key: str, default: str | None = None
                     ) -> str | None:
    value = raw.get(key)
    if value is None:
        return default
    if value.__class__ is not str:
        raise EntryShapeError(f"{key} must be a string or null, not {json_type(value)}")
    return value


def string_or(raw: Mapping[str, Any], key: str, default: str) -> str:
    found = optional_string(raw, key, default)
    return default if found is None else found


def object_or_empty(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return {} if value is None else json_object(value, key)


def strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    if not isinstance(value, LISTS) or not all_strings(value):
        raise EntryShapeError(f"{key} must be a list of strings")
    return tuple(value)


def all_strings(values: Iterable[Any]) -> bool:
    return {value.__class__ for value in values} <= {str}


def string_map(raw: Mapping[str, Any], key: str, mode: ParseMode) -> Mapping[str, str]:
    value = object_or_empty(raw, key)
    if not all_strings(value.values()):
        raise EntryShapeError(f"{key} must map names to strings")
    frozen: Mapping[str, str] = mode.freeze(value)
    return frozen


def positive_number(raw: Mapping[str, Any], key: str, default: float) -> float:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise EntryShapeError(f"{key} must be a positive number")
    return float(value)


def positive_integer(raw: Mapping[str, Any], key: str, default: int) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise EntryShapeError(f"{key} must be a positive integer")
    return value


def line_number(raw: Mapping[str, Any], key: str = "line") -> int:
    value = raw.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EntryShapeError(f"{key} must be an integer")
    return value


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def document_list(document: Mapping[str, Any], key: str) -> list[Any] | tuple[Any, ...]:
    """``document[key]``, a list (absent: empty)."""
    value = document.get(key)
    if value is None:
        return []
    if not isinstance(value, LISTS):
        raise EntryShapeError(f"{key} must be a list, not {json_type(value)}")
    return value


def parsed_entry(section: str, index: int, raw: Any, parse: Callable[[Any], Made]) -> Made:
    """``parse(raw)`` for entry ``index`` of ``section``; any failure, a wrong shape the
    parse names or one it did not foresee, is an EntryShapeError naming the entry."""
    try:
        return parse(raw)
    except RecursionError:
        problem = "nested too deeply"
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problem = f"missing key {error.args[0]!r}" if isinstance(error, KeyError) else str(error)
    raise EntryShapeError(f"{section}[{index}]{entry_label(raw)}: {problem}")


def entry_label(raw: Any) -> str:
    """`` (CODE)`` or `` (TOOL)`` of a raw entry, for messages ('' when it has none)."""
    if isinstance(raw, Mapping):
        label = raw.get("code", raw.get("tool"))
        return f" ({label})" if isinstance(label, str) else " (?)"
    return " (?)"
