"""Configuration strings with ``${SETTING}`` placeholders and ``{slot}`` argument slots.

A configuration string (URL, header value, body template) is parsed once into tokens.
Settings are substituted per context, slots per call, and a substituted value is never
scanned again: a setting whose value contains ``{x}`` and an argument whose value contains
``${X}`` both stay literal text. That is the whole defence against an LLM-supplied
argument reaching a secret, so nothing here works by repeated string replacement.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from compiler.runtime.errors import UnresolvedPlaceholderError
from compiler.runtime.records import record
from compiler.runtime.redaction import MIN_SECRET_LENGTH, REDACTED, Redactor

__all__ = [
    "MIN_SECRET_LENGTH", "REDACTED", "URL_PATH_SAFE", "Redactor", "Setting", "Slot", "Text",
    "Token",
    "find_slots", "parse_template", "placeholders_in", "render", "resolve_string", "setting_names",
    "single_slot", "substitute_settings", "template_slots", "url_slots",
]

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
TOKEN_PATTERN = re.compile(r"\$\{(" + NAME + r")\}|\{(" + NAME + r")\}")
SETTING_PATTERN = re.compile(r"\$\{(" + NAME + r")\}")
# Exact types that hold no text to scan (placeholders_in skips them at once).
_NEITHER_TEXT_NOR_CONTAINER = frozenset({int, float, bool, type(None)})
# What stays unencoded when a setting is put into a URL path (RFC 3986 pchar and "/").
URL_PATH_SAFE = "/-._~!$&'()*+,;=:@"


@record(frozen=True, slots=True)
class Text:
    """Literal text."""

    text: str


@record(frozen=True, slots=True)
class Setting:
    """A ``${NAME}`` placeholder, filled from the context's settings."""

    name: str


@record(frozen=True, slots=True)
class Slot:
    """A ``{name}`` argument slot, filled per call."""

    name: str


Token = Text | Setting | Slot


def parse_template(text: str, slot_names: Iterable[str] = ()) -> tuple[Token, ...]:
    """Split ``text`` into tokens; ``{name}`` is a slot only when ``name`` is in ``slot_names``."""
    slots = frozenset(slot_names)
    tokens: list[Token] = []
    position = 0
    for match in TOKEN_PATTERN.finditer(text):
        setting_name, slot_name = match.group(1), match.group(2)
        if slot_name is not None and slot_name not in slots:
            continue
        if match.start() > position:
            tokens.append(Text(text[position : match.start()]))
        tokens.append(Setting(setting_name) if setting_name else Slot(str(slot_name)))
        position = match.end()
    if position < len(text):
        tokens.append(Text(text[position:]))
    return _merge_text(tokens)


def setting_placeholder(name: str) -> str:
    """The ``${NAME}`` text of setting ``name`` (a :data:`NAME`), as sources write it."""
    return "${" + name + "}"


def setting_names(text: str) -> list[str]:
    """The ``${NAME}`` placeholders of ``text``, in order of appearance."""
    return SETTING_PATTERN.findall(text)


def find_slots(text: str) -> list[str]:
    """The ``{slot}`` names of ``text`` in order (``${NAME}`` placeholders excluded)."""
    return [match.group(2) for match in TOKEN_PATTERN.finditer(text) if match.group(2)]


def url_slots(url: str) -> list[str]:
    """The ``{slot}`` names of a URL, first occurrence order, unique."""
    return list(dict.fromkeys(find_slots(url)))


def template_slots(template: Any) -> list[str]:
    """The ``{slot}`` names of a body template (JSON value or string), unique, in document
    order. Keys are not slots: only string values are filled per call."""
    names: list[str] = []
    pending = [template]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            names += find_slots(node)
        elif isinstance(node, Mapping):
            pending.extend(reversed(list(node.values())))
        elif isinstance(node, list | tuple):
            pending.extend(reversed(node))
    return list(dict.fromkeys(names))


def placeholders_in(value: Any) -> list[str]:
    """Sorted unique ``${NAME}`` settings anywhere in a configuration value: its strings,
    and the keys of its mappings (the runtime resolves settings in body_template keys too).

    The one scan for both sides: the compiler records it as ``placeholders`` in the
    manifest (what ``capc diff`` reports as new secrets) and an api tool resolves exactly
    these names. Walks iteratively, so a deep value cannot exhaust the stack. Exact types
    and a substring test before the pattern. Proven equal by
    tests/unit/test_placeholders_scan.py::test_placeholders_in_finds_what_the_definition_finds.
    """
    names: set[str] = set()
    pending = [value]
    while pending:
        node = pending.pop()
        kind = type(node)
        # Exact types first: a number, null, list or dict never reaches the (slow) Mapping
        # ABC check, which the general branches below keep for other types. "${" starts
        # every match, and most strings hold none: a substring test is far cheaper.
        if kind in _NEITHER_TEXT_NOR_CONTAINER:
            continue
        if isinstance(node, str):
            if "${" in node:
                names.update(SETTING_PATTERN.findall(node))
        elif kind is list or kind is tuple:
            pending.extend(node)
        elif kind is dict or isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(key, str) and "${" in key:
                    names.update(SETTING_PATTERN.findall(key))
                pending.append(item)
        elif isinstance(node, list | tuple):
            pending.extend(node)
    return sorted(names)


def substitute_settings(tokens: tuple[Token, ...], values: Mapping[str, str]) -> tuple[Token, ...]:
    """Replace every Setting token by its value; UnresolvedPlaceholderError if one has none."""
    missing = [
        token.name
        for token in tokens
        if isinstance(token, Setting) and not values.get(token.name)
    ]
    if missing:
        raise UnresolvedPlaceholderError(missing)
    return _merge_text(
        [Text(values[token.name]) if isinstance(token, Setting) else token for token in tokens]
    )


def render(tokens: tuple[Token, ...], fill_slot: Callable[[str], str]) -> str:
    """Join the tokens, filling each slot with ``fill_slot(name)``; settings must be gone."""
    parts: list[str] = []
    for token in tokens:
        if isinstance(token, Text):
            parts.append(token.text)
        elif isinstance(token, Slot):
            parts.append(fill_slot(token.name))
        else:
            raise ValueError(f"setting ${{{token.name}}} was not substituted")
    return "".join(parts)


def resolve_string(text: str, values: Mapping[str, str]) -> str:
    """Substitute the settings of a configuration string that has no slots."""
    return render(substitute_settings(parse_template(text), values), _no_slot)


def single_slot(tokens: tuple[Token, ...]) -> str | None:
    """The slot name when the tokens are exactly one slot (a native-type JSON leaf)."""
    if len(tokens) == 1 and isinstance(tokens[0], Slot):
        return tokens[0].name
    return None


def _no_slot(name: str) -> str:
    raise ValueError(f"unexpected slot {{{name}}}")


def _merge_text(tokens: list[Token]) -> tuple[Token, ...]:
    merged: list[Token] = []
    for token in tokens:
        if isinstance(token, Text):
            if not token.text:
                continue
            if merged and isinstance(merged[-1], Text):
                merged[-1] = Text(merged[-1].text + token.text)
                continue
        merged.append(token)
    return tuple(merged)
