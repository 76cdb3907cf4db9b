"""A scalar schema's constraints → a SPEC §10 entry's (enum, default, format, bounds,
pattern), and the checks on values the document writes.

What cannot be kept is left out with a note: more enum values than capc takes, a pattern
longer than :data:`MAX_PATTERN_LENGTH`, one the linear-time argument validation does not
run, a JavaScript ``/regex/flags`` literal. Everything else is copied as the document says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compiler.runtime.manifest.parameters import FORMATS
from compiler.runtime.tools.strict import OPENAI_MAX_ENUM_VALUES

# The most enum values a capc parameter entry takes (schemas/capability-v1.json says the
# same; a test holds them together).
MAX_ENUM_VALUES = OPENAI_MAX_ENUM_VALUES
# A longer pattern is dropped with a note (compiling it would cost what the document wants).
MAX_PATTERN_LENGTH = 1000
BINARY_MARK = "__binary__"
SCALARS = ("string", "integer", "number", "boolean")
_JS_REGEX = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)


def scalar_entry(entry: dict[str, Any], keywords: Mapping[str, Any], kind: str, label: str,
                 notes: list[str]) -> None:
    """Add the constraints of a ``kind`` scalar (``keywords``: the merged schema) to
    ``entry``; what is left out is said in ``notes``."""
    values = _list(keywords.get("enum"))
    if "const" in keywords:
        values = [keywords["const"]]
    kept = list(dict.fromkeys(v for v in values if _fits(v, kind)))
    if len(kept) > MAX_ENUM_VALUES:
        # capc (and OpenAI's strict mode) take at most this many: a plain field the
        # upstream validates is the nearest schema that compiles.
        notes.append(f"{label}: enum of {len(kept)} values left out (capc takes at "
                     f"most {MAX_ENUM_VALUES}); any {kind} is accepted")
        kept = []
    if kept:
        entry["enum"] = kept
    default = keywords.get("default")
    if default is not None and _fits(default, kind) and (not kept or default in kept):
        entry["default"] = default
    written = keywords.get("format")
    if written == "binary" and kind == "string":
        entry[BINARY_MARK] = True  # a file in multipart; the mapping removes the mark
    elif isinstance(written, str) and written in FORMATS.get(kind, ()):
        entry["format"] = written
    if kind == "string":
        copy_int(entry, keywords, ("minLength", "min_length"), ("maxLength", "max_length"))
        _pattern(entry, keywords.get("pattern"), label, notes)
    else:
        for word, name in (("minimum", "minimum"), ("maximum", "maximum")):
            bound = keywords.get(word)
            if _fits(bound, "number"):
                entry[name] = bound
    _bounds_fit_values(entry, label, notes)


_BOUNDS = ("min_length", "max_length", "minimum", "maximum", "pattern")


def _meets(name: str, value: Any, bound: Any) -> bool:
    """Whether a value the document lists (an enum value, the default) meets a bound."""
    if name in ("min_length", "max_length", "pattern"):
        if not isinstance(value, str):
            return True
        if name == "pattern":
            return re.search(bound, value) is not None
        return bool(len(value) >= bound) if name == "min_length" else bool(len(value) <= bound)
    if not _fits(value, "number"):
        return True
    return bool(value >= bound) if name == "minimum" else bool(value <= bound)


def _bounds_fit_values(entry: dict[str, Any], label: str, notes: list[str]) -> None:
    """A bound the document's own values break is left out, with a note: the values name
    what the API takes (Adyen's ``gender``: enum ``MALE``, ``FEMALE``, ``UNKNOWN`` with
    ``maxLength: 1``), and capc refuses an entry whose enum or default it rejects."""
    values = [*entry.get("enum", ()), *([entry["default"]] if "default" in entry else [])]
    for name in _BOUNDS:
        if name in entry and values and not all(_meets(name, v, entry[name]) for v in values):
            notes.append(f"{label}: {name} {repr(entry[name])[:60]} left out: the "
                         "document's own enum or default values break it")
            del entry[name]


def _pattern(entry: dict[str, Any], pattern: Any, label: str, notes: list[str]) -> None:
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_LENGTH:
        notes.append(f"{label}: a pattern of {len(pattern)} characters (over "
                     f"{MAX_PATTERN_LENGTH}); left out")
        return
    if isinstance(pattern, str):
        pattern = _plain_pattern(pattern, label, notes)
    if isinstance(pattern, str):
        if _runs(pattern):
            entry["pattern"] = pattern
        else:
            notes.append(f"{label}: pattern {pattern[:60]!r} is not one the "
                         "linear-time argument validation runs; left out")


def _plain_pattern(pattern: str, label: str, notes: list[str]) -> str | None:
    """A JavaScript literal ``/regex/`` as the plain regex; with flags, dropped (a note
    says so): copied as is, its slashes would be matched as characters."""
    literal = _JS_REGEX.match(pattern)
    if literal is None:
        return pattern
    if literal.group(2):
        notes.append(f"{label}: JavaScript pattern with flags {literal.group(2)!r} left out")
        return None
    return literal.group(1)


def _runs(pattern: str) -> bool:
    """Whether the argument validation's regex engine (and Python's) accept ``pattern``."""
    from compiler.runtime.tools.argument_schemas import pattern_compiles

    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return pattern_compiles(pattern)


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return False


def copy_int(entry: dict[str, Any], keywords: Mapping[str, Any],
             *pairs: tuple[str, str]) -> None:
    """Copy each ``(keyword, entry name)`` whose value is a non-negative integer."""
    for word, name in pairs:
        value = keywords.get(word)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            entry[name] = value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
