"""``placeholders_in``'s fast paths (exact types first, a substring test before the
pattern) find exactly what the plain definition finds, for any configuration value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.placeholders import SETTING_PATTERN, placeholders_in


def reference(value: Any) -> list[str]:
    """The definition: every ``${NAME}`` in strings and mapping keys, at any depth."""
    names: set[str] = set()
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            names.update(SETTING_PATTERN.findall(node))
        elif isinstance(node, Mapping):
            for key, item in node.items():
                if isinstance(key, str):
                    names.update(SETTING_PATTERN.findall(key))
                pending.append(item)
        elif isinstance(node, list | tuple):
            pending.extend(node)
    return sorted(names)


class _Text(str):
    pass


class _Settings(Mapping[Any, Any]):
    """A mapping that is not a dict: the general branch."""

    def __init__(self, items: dict[Any, Any]) -> None:
        self._items = items

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


_text = st.text(alphabet="${}_aZ9 x", max_size=12) | st.sampled_from(
    ["${TOKEN}", "a${B_1}c${C}", "$${D}", "${", "${1X}", "{slot}", "${ E}"])
_leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text
           | _text.map(_Text) | st.binary(max_size=3))
_keys = _text | st.integers(0, 3) | _text.map(_Text)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_keys, inner, max_size=4)
    | st.dictionaries(_keys, inner, max_size=3).map(MappingProxyType)
    | st.dictionaries(_keys, inner, max_size=3).map(_Settings),
    max_leaves=30)


@settings(max_examples=250, deadline=None)
@given(_values)
def test_placeholders_in_finds_what_the_definition_finds(value: Any) -> None:
    assert placeholders_in(value) == reference(value)


def test_settings_in_keys_strings_and_nested_lists_are_found() -> None:
    value = ["https://h/${HOST}", {"X-${KEY}": ("${A}", [{"b": "${B}"}])}, 3, None,
             _Settings({"${C}": _Text("${D}")})]
    assert placeholders_in(value) == ["A", "B", "C", "D", "HOST", "KEY"]
