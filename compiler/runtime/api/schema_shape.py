"""The usual answer of ``output_validation.schema_shape_problem``, counted fast.

Most schemas are well within the shape limits: counting them level by level, each
container's children gathered by one C ``extend``, tells so without a tuple per node.
A schema past either limit is left to the ordered walk, which names the limit it meets
first.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


def within_shape_limits(schema: Any, max_depth: int, max_nodes: int) -> bool:
    """Whether ``schema`` has at most ``max_nodes`` nodes, none nested deeper than
    ``max_depth`` (nodes and depth as ``schema_shape_problem`` counts them)."""
    level, nodes = [schema], 0
    for _ in range(max_depth + 1):
        nodes += len(level)
        below: list[Any] = []
        for node in level:
            kind = type(node)
            if kind is dict or kind is MappingProxyType:
                below += node.values()
            elif kind is list or kind is tuple:
                below += node
            elif not isinstance(node, str | int | float | None):  # the walk's own checks
                if isinstance(node, Mapping):
                    below += node.values()
                elif isinstance(node, list | tuple):
                    below += node
            if nodes + len(below) > max_nodes:
                return False
        if not below:
            return True
        level = below
    return False  # a node below the deepest level allowed
