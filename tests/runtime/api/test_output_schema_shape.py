"""The output schema's shape limits (depth, nodes) and the walk over its object schemas
answer as their plain general form does, for any value a document or a mapping type
holds: the C type checks they try first (dict, str, numbers) only save the ABC's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.output_shaping import (
    _ONE_SCHEMA,
    _SCHEMA_LISTS,
    _SCHEMA_MAPS,
    _any_node_problem,
    _node_problems,
    _subschemas,
    shaped_output_schema,
)
from compiler.runtime.api.output_validation import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_NODES,
    schema_shape_problem,
)


class Frozen(Mapping[str, Any]):
    """A mapping that is not a dict (as the manifest model's frozen ones)."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def general_shape_problem(schema: Any) -> str | None:
    """schema_shape_problem as written before its type checks were ordered."""
    pending: list[tuple[Any, int]] = [(schema, 0)]
    nodes = 0
    while pending:
        node, depth = pending.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_NODES:
            return f"it has more than {MAX_SCHEMA_NODES} nodes"
        if depth > MAX_SCHEMA_DEPTH:
            return f"it is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        if isinstance(node, Mapping):
            pending.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list | tuple):
            pending.extend((child, depth + 1) for child in node)
    return None


_leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=3))
_keys = st.sampled_from(["type", "properties", "items", "anyOf", "x", "pattern"])
_values = st.recursive(
    _leaves, lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_keys, inner, max_size=4)
    | st.dictionaries(_keys, inner, max_size=3).map(Frozen), max_leaves=40)


def _deep(levels: int) -> Any:
    schema: Any = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@settings(max_examples=300, deadline=None)
@given(_values)
def test_the_shape_problem_is_the_general_walks(schema: Any) -> None:
    assert schema_shape_problem(schema) == general_shape_problem(schema)


def test_the_limits_are_found_as_before() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"}
                                             for i in range(MAX_SCHEMA_NODES)}}
    for schema in (_deep(MAX_SCHEMA_DEPTH), _deep(MAX_SCHEMA_DEPTH // 2 + 1), wide,
                   Frozen({"items": _deep(MAX_SCHEMA_DEPTH)}), [wide]):
        assert schema_shape_problem(schema) == general_shape_problem(schema)
    assert schema_shape_problem(wide) is not None
    assert schema_shape_problem(_deep(MAX_SCHEMA_DEPTH)) is not None


def general_subschemas(schema: Any, path: tuple[str | int, ...]
                       ) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    """_subschemas as written before it read the keywords from a node's own keys."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [(path, schema)]
    while pending:
        where, node = pending.pop()
        if not isinstance(node, Mapping):
            continue
        yield where, node
        for keyword in _ONE_SCHEMA:
            if keyword in node:
                pending.append(((*where, keyword), node[keyword]))
        for keyword in _SCHEMA_LISTS:
            if isinstance(node.get(keyword), list):
                pending += [((*where, keyword, index), item)
                            for index, item in enumerate(node[keyword])]
        for keyword in _SCHEMA_MAPS:
            if isinstance(node.get(keyword), Mapping):
                pending += [((*where, keyword, name), item)
                            for name, item in node[keyword].items()]


_schema_keys = st.sampled_from([*_ONE_SCHEMA, *_SCHEMA_LISTS, *_SCHEMA_MAPS, "type",
                                "pattern", "nullable", "x"])
_schemas = st.recursive(
    _leaves, lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(_schema_keys, inner, max_size=5)
    | st.dictionaries(_schema_keys, inner, max_size=4).map(Frozen), max_leaves=50)


@settings(max_examples=400, deadline=None)
@given(_schemas)
def test_the_subschema_walk_is_the_general_walks(schema: Any) -> None:
    walked = list(_subschemas(schema, ("output_schema",)))
    general = list(general_subschemas(schema, ("output_schema",)))
    assert [path for path, _ in walked] == [path for path, _ in general]
    assert all(mine is theirs for (_, mine), (_, theirs) in zip(walked, general, strict=True))


def test_an_unshaped_schema_is_judged_once_and_the_same() -> None:
    """Without select or max_items the shaped schema is the declared one (its shape was
    judged with it); a too-large declared schema is still refused."""
    fine = _deep(3)
    assert shaped_output_schema({"output_schema": fine}).schema is fine
    refused = shaped_output_schema({"output_schema": _deep(MAX_SCHEMA_DEPTH)})
    assert refused.schema is None and refused.problems


_problem_leaves = _leaves | st.sampled_from(["^[a-z]+$", "(a+)+", "(", "x{2,}"])
_problem_keys = st.sampled_from([*_ONE_SCHEMA, *_SCHEMA_LISTS, *_SCHEMA_MAPS, "type",
                                 "pattern", "nullable", "$ref", "x"])
_problem_schemas = st.recursive(
    _problem_leaves, lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_problem_keys, inner, max_size=5)
    | st.dictionaries(_problem_keys, inner, max_size=4).map(Frozen), max_leaves=50)


@settings(max_examples=600, deadline=None)
@given(_problem_schemas)
def test_the_quick_node_check_is_the_walks(schema: Any) -> None:
    """_any_node_problem says whether any schema the walk yields has a problem."""
    found = [problem for path, node in _subschemas(schema, ("output_schema",))
             for problem in _node_problems(path, node)]
    assert _any_node_problem(schema) == bool(found)
