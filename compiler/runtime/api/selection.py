"""``select`` (JMESPath) with bounded work and a bounded result.

A JMESPath expression can multiply its input: ``[@, @]`` doubles it by reference, so
``[@, @]`` piped 22 times turns a 110-byte reply into a 465-million-character text when
serialised, and ``... | []`` makes the copies real. Two guards, one fact:

- at compile time, :func:`growth_factor` bounds how many times its input an expression
  can make (a product over pipes and projections, a sum over multi-selects of the same
  part); above :data:`MAX_GROWTH` the compiler refuses it with a located diagnostic;
- at run time every node the interpreter evaluates is charged the size of its result
  (measured as a tree, so shared references count every time they would be written, and
  measured only up to what is left), against a work budget proportional to the reply;
  the result itself may be at most :data:`MAX_GROWTH` times the reply. Every node's own
  work is at most about the size of its children's results, already charged, so the
  whole evaluation is linear in the reply.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

# How many times the size of the reply a selection result may be (and a compile-time
# growth factor); {a: @, b: @} doubles, and a few such steps are legitimate.
MAX_GROWTH = 8
# The evaluation may touch this many times the reply's size, summed over every node.
WORK_FACTOR = 16
# Room for literals and small replies, in size units (about characters).
BASE_ALLOWANCE = 100_000


class SelectionTooLarge(Exception):
    """A ``select`` would do too much work or make too large a result."""


def measured_size(value: Any, limit: int) -> int:
    """The size of ``value`` written out, in about characters; stops past ``limit``.

    A tree walk (shared references count each time), iterative (deep JSON is no problem),
    and never longer than ``limit`` steps.
    """
    total = 0
    pending = [value]
    while pending and total <= limit:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2
            for key, child in item.items():
                total += len(str(key)) + 3
                pending.append(child)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            pending.extend(item)
        else:
            total += 4
    return total


@functools.cache
def _budgeted_interpreter() -> Any:
    """jmespath's interpreter, charging every evaluated node the size of its result.

    Made on first use: jmespath is imported only by a manifest that has a ``select``.
    """
    from jmespath.visitor import TreeInterpreter

    class BudgetedInterpreter(TreeInterpreter):  # type: ignore[misc]
        def __init__(self, budget: int) -> None:
            super().__init__()
            self._left = budget

        def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
            result = super().visit(node, *args, **kwargs)
            self._left -= measured_size(result, self._left)
            if self._left < 0:
                raise SelectionTooLarge("select did more work than this response allows")
            return result

    return BudgetedInterpreter


class BoundedSelection:
    """A compiled ``select`` expression evaluated under a work and result budget."""

    def __init__(self, expression: str) -> None:
        import jmespath

        self.expression = expression
        self._parsed = jmespath.compile(expression)

    def search(self, value: Any, reply_size: int) -> Any:
        """The selection of ``value`` (parsed from a reply of ``reply_size`` characters).

        Raises SelectionTooLarge when the expression multiplies the reply beyond bounds.
        """
        budget = WORK_FACTOR * reply_size + BASE_ALLOWANCE
        result = _budgeted_interpreter()(budget).visit(self._parsed.parsed, value)
        limit = MAX_GROWTH * reply_size + BASE_ALLOWANCE
        if measured_size(result, limit) > limit:
            raise SelectionTooLarge(
                f"select made a result over {MAX_GROWTH} times the size of the response"
            )
        return result

    def __repr__(self) -> str:
        return f"BoundedSelection({self.expression!r})"


def growth_factor(expression: str) -> float:
    """How many times the size of its input ``expression`` can make (an upper bound)."""
    import jmespath

    return _growth(jmespath.compile(expression).parsed)


# Nodes whose result is a part of their input (or a constant, or a boolean).
_PART_OF_INPUT = {"field", "index", "slice", "current", "identity"}
_CONSTANT = {"literal", "comparator", "not_expression", "expref"}


def _growth(node: Any) -> float:
    kind = node.get("type")
    children = [child for child in node.get("children", []) if isinstance(child, dict)]
    if kind in _PART_OF_INPUT:
        return 1.0
    if kind in _CONSTANT:
        return 0.0
    if kind in {"subexpression", "pipe", "index_expression", "projection",
                "value_projection", "filter_projection"}:
        # Each step works on what the previous one made: factors multiply. A filter's
        # condition (the third child) yields booleans.
        steps = children[:2] if kind == "filter_projection" else children
        factor = 1.0
        for child in steps:
            factor *= max(_growth(child), 1.0)  # a constant per element is still per element
        return factor
    if kind in {"or_expression", "and_expression", "flatten", "key_val_pair"}:
        return max((_growth(child) for child in children), default=0.0)
    # multi_select_list, multi_select_dict, function_expression: the parts add up, but
    # children that start at different fields of the input take disjoint parts of it.
    by_root: dict[Any, float] = {}
    shared = 0.0
    for child in children:
        root = _root_field(child)
        if root is None:
            shared += _growth(child)
        else:
            by_root[root] = by_root.get(root, 0.0) + _growth(child)
    return shared + max(by_root.values(), default=0.0)


def _root_field(node: Any) -> str | None:
    """The field a node's evaluation starts from (``a`` in ``a.b[0]``), if it starts at one."""
    while node.get("type") in {"key_val_pair", "subexpression", "index_expression",
                               "projection", "flatten", "filter_projection",
                               "value_projection"}:
        children = [child for child in node.get("children", []) if isinstance(child, dict)]
        if not children:
            return None
        node = children[0]
    return str(node["value"]) if node.get("type") == "field" else None
