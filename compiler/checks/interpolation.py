"""Compile-side views of the runtime's interpolation grammar (``${NAME}`` and ``{slot}``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from compiler.runtime.placeholders import SETTING_PATTERN, find_slots

__all__ = ["find_slots", "iter_strings", "malformed_placeholders"]

_PLACEHOLDER_START = re.compile(r"\$\{")


def malformed_placeholders(text: str) -> list[str]:
    """Every ``${`` that does not start a well-formed ``${NAME}`` (shown up to 20 chars)."""
    if "${" not in text:  # most configuration strings: no regex scan
        return []
    return [text[m.start(): m.start() + 20] for m in _PLACEHOLDER_START.finditer(text)
            if not SETTING_PATTERN.match(text, m.start())]


def iter_strings(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[
    tuple[tuple[str | int, ...], str]
]:
    """Every string value inside a JSON value (keys excluded), with its path, for located
    diagnostics. Which settings a value needs is ``compiler.runtime.placeholders
    .placeholders_in``, which scans keys too."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_strings(item, (*path, index))
