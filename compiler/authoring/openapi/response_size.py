"""Whether a derived reply schema is within what capc validates with, and short enough.

A derived schema shares its parts: each reused part (:mod:`response_memo`) is one object
reached from many places. :func:`fits` asks what ``schema_shape_problem(schema) is None
and len(json.dumps(schema)) <= limit`` asks, measuring each shared part once (by its
identity, for this one call) instead of walking and encoding it at every place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii
from typing import Any

from compiler.runtime.api.output_validation import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES

Extent = tuple[int, int, int]  # nodes, levels below, JSON characters
Measured = dict[int, tuple[Any, Extent]]


class _Outside(Exception):
    """Nested past MAX_SCHEMA_DEPTH or past MAX_SCHEMA_NODES nodes."""


def fits(schema: Any, max_characters: int, measured: Measured) -> bool:
    """``schema_shape_problem(schema) is None and len(json.dumps(schema)) <=
    max_characters``, by one pass over each distinct part (``measured``: the parts
    measured so far in this import, by identity; each entry holds its part alive).

    Proven equal by
    tests/authoring/openapi/test_openapi_output_schemas.py::test_fits_answers_as_the_shape_check_and_json_text
    """
    measure = _Measure(measured)
    try:
        _, _, characters = measure.extent(schema, 0)
    except _Outside:
        return False
    if measure.unencodable:  # a key or value json.dumps converts (or refuses) its way
        return len(json.dumps(schema)) <= max_characters
    return characters <= max_characters


class _Measure:
    """One call's walk: nodes, depth below and JSON length of each part."""

    def __init__(self, measured: Measured) -> None:
        self.known = measured
        self.unencodable = False

    def extent(self, node: Any, depth: int) -> Extent:
        """Nodes (as schema_shape_problem counts them), levels below and JSON length of
        ``node``, found at ``depth``; _Outside past either shape limit."""
        if depth > MAX_SCHEMA_DEPTH:
            raise _Outside
        kind = type(node)
        if kind is str:
            return 1, 0, len(encode_basestring_ascii(node))
        if kind is not dict and kind is not list:
            if not isinstance(node, dict | list | tuple | Mapping):
                return 1, 0, self._leaf(node)
            if isinstance(node, str):
                return 1, 0, len(encode_basestring_ascii(node))
        known = self.known.get(id(node))
        if known is not None and known[0] is node and depth + known[1][1] <= MAX_SCHEMA_DEPTH:
            return known[1]
        found = self._container(node, depth)
        self.known[id(node)] = (node, found)
        return found

    def _container(self, node: Any, depth: int) -> Extent:
        mapping = isinstance(node, dict | Mapping)
        values = node.values() if mapping else node
        nodes, below, characters = 1, 0, 2 + 2 * max(len(values) - 1, 0)
        if mapping:
            if type(node) is not dict:
                self.unencodable = True  # json.dumps refuses it, at the end
            for key in node:
                if type(key) is str:
                    characters += len(encode_basestring_ascii(key)) + 2
                else:  # json.dumps' own conversion decides its length, at the end
                    self.unencodable = True
        for value in values:
            inner = self.extent(value, depth + 1)
            nodes += inner[0]
            if inner[1] >= below:
                below = inner[1] + 1
            characters += inner[2]
            if nodes > MAX_SCHEMA_NODES:
                raise _Outside
        return nodes, below, characters

    def _leaf(self, value: Any) -> int:
        kind = type(value)
        if kind is bool:
            return 4 if value else 5
        if value is None:
            return 4
        if kind is int:
            return len(repr(value))
        try:
            return len(json.dumps(value))
        except (TypeError, ValueError):
            self.unencodable = True
            return 0
