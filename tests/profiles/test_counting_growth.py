"""Counting what a remote party wrote stays linear: a pinned MCP server's descriptions and
schemas are the server's text, and a compile or ``capc budget`` counts them.

Each workload is timed at n and 8n in a child process with a time limit
(tests/support/complexity.py): one huge description of text chosen to be hard for a BPE
(a single run of letters, CJK, digits, punctuation), and one schema with thousands of
properties. A schema nested thousands of levels deep is reported, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compiler.profiles.tokens import (
    MAX_DEPTH,
    Definition,
    anthropic_tokens,
    definition_size_problem,
    o200k,
    openai_tokens,
)
from compiler.runtime.manifest.fields import freeze
from tests.support.complexity import assert_linear

pytest.importorskip("toktok")
THIS = "tests.profiles.test_counting_growth"
# One piece per pattern for the pre-tokenizer: no spaces to split on.
HARD = ("a", "日本語", "7", "!?", "ab")


def long_descriptions(n: int) -> Callable[[], object]:
    """Definitions whose descriptions are each ``n`` characters of one hard pattern."""
    definitions = [Definition(f"t{index}", (pattern * n)[:n], freeze({
        "type": "object", "properties": {"q": {"type": "string",
                                               "description": (pattern * n)[:n]}}}))
        for index, pattern in enumerate(HARD)]
    count = o200k()
    return lambda: (openai_tokens(definitions, count), anthropic_tokens(definitions, count),
                    [definition_size_problem(definition) for definition in definitions])


def wide_schema(n: int) -> Callable[[], object]:
    """One definition with ``n`` properties, some with enums and nested objects."""
    properties: dict[str, Any] = {}
    for index in range(n):
        spec: dict[str, Any] = {"type": "string", "description": f"Property {index}."}
        if index % 7 == 0:
            spec["enum"] = ["a", "b", index]
        if index % 11 == 0:
            spec = {"type": "object", "properties": {"x": {"type": "integer"}}}
        properties[f"p{index}"] = spec
    definition = Definition("wide", "Many properties.", freeze({
        "type": "object", "properties": properties}))
    count = o200k()
    return lambda: (openai_tokens([definition], count), anthropic_tokens([definition], count))


def test_a_huge_description_counts_in_linear_time() -> None:
    assert_linear(f"{THIS}:long_descriptions", 20_000, time_limit=120)


def test_a_schema_of_thousands_of_properties_counts_in_linear_time() -> None:
    assert_linear(f"{THIS}:wide_schema", 500, time_limit=120)


def test_a_schema_nested_thousands_deep_is_reported_not_a_crash() -> None:
    deep: dict[str, Any] = {"type": "object"}
    node = deep
    for _ in range(5000):
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"a": child}
        node = child
    definition = Definition("deep", "Deep.", deep)
    assert definition_size_problem(definition) in (
        "its schema cannot be written as JSON",
        f"its schema is nested deeper than {MAX_DEPTH} levels")
    # The recipe stops at MAX_DEPTH: the walk is bounded whatever the schema's depth.
    (tokens,) = openai_tokens([definition], o200k())
    assert 0 < tokens < 7 + 3 + (MAX_DEPTH + 1) * (3 + 3 + 10)
