"""Runtime conditions: the ``when:`` of a capability, evaluated against a RuntimeContext.

Grammar (the value of ``when``, JSON/YAML)::

    EXPR      := null                          -> always holds
               | {"all": [EXPR, ...]}          -> every EXPR holds ([] holds)
               | {"any": [EXPR, ...]}          -> at least one EXPR holds ([] does not)
               | {"not": EXPR}                 -> EXPR does not hold
               | {ATTRIBUTE: TEST, ...}        -> every ATTRIBUTE test holds
    TEST      := SCALAR                        -> the attribute equals the value
               | {"in": [SCALAR, ...]}         -> the attribute equals one of the values

``ATTRIBUTE`` names an attribute of the context: ``user_id``, ``group_id``, ``chat_id`` or
any extra keyword given to ``RuntimeContext`` (``page_type``, ``direction``, ...). A
mapping mixing ``all``/``any``/``not`` with attribute names is invalid.

A missing attribute (absent, or None) makes its test *unknown*. Unknown is never turned
into true, not even under ``not``: ``{"not": {"page_type": "canvas"}}`` with no page type
does not hold. This is three-valued logic (unknown propagates through ``all``/``any``/
``not`` unless a definite branch decides), and an unknown result is false, fail-closed,
with a reason naming the missing attribute. An invalid expression is false too.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from compiler.runtime.records import record

OPERATORS = ("all", "any", "not")
INTEGER_ATTRIBUTES = frozenset({"user_id", "group_id", "chat_id"})
ATTRIBUTE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
# Spellings from other rule languages that would otherwise read as attribute names.
LOOKALIKE_OPERATORS = {"and": "all", "or": "any", "none": "not", "nor": "not",
                       "eq": "ATTRIBUTE: VALUE", "in": "ATTRIBUTE: {in: [...]}",
                       "equals": "ATTRIBUTE: VALUE"}


class AttributeSource(Protocol):
    """Anything conditions can read attributes from (RuntimeContext implements it)."""

    def condition_attribute(self, name: str) -> Any:
        """The attribute's value, or None when the context does not have it."""
        ...


class Truth(enum.Enum):
    """Three-valued truth: a missing attribute gives UNKNOWN."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


@record(frozen=True, slots=True)
class Outcome:
    """The truth of one (sub)expression and, when it is not TRUE, why."""

    truth: Truth
    reason: str = ""


class InvalidCondition(ValueError):
    """A ``when`` expression that does not follow the grammar."""


def condition_holds(when: Any, ctx: AttributeSource) -> tuple[bool, str]:
    """Evaluate ``when`` against ``ctx``: ``(True, "")`` or ``(False, reason)``."""
    if when is None:
        return True, ""
    try:
        outcome = _evaluate(when, ctx)
    except InvalidCondition as error:
        return False, f"invalid condition: {error}"
    if outcome.truth is Truth.TRUE:
        return True, ""
    return False, outcome.reason


def condition_errors(when: Any) -> list[str]:
    """Every problem of ``when`` as text (empty when valid)."""
    return [message for _, message in condition_problems(when)]


Path = tuple[str | int, ...]


def condition_problems(when: Any, path: Path = ()) -> list[tuple[Path, str]]:
    """Every problem of ``when``, each with the path of the node it is about.

    Beyond the grammar, tests that can never hold are problems too: an empty ``in``
    list, a null value, and a value of the wrong type for an attribute whose type is
    known (``user_id``, ``group_id`` and ``chat_id`` are integers).
    """
    if when is None:
        return []
    if not isinstance(when, Mapping):
        return [(path, f"expected a mapping, got {_kind(when)}")]
    if not when:
        return [(path, "an empty mapping tests nothing")]
    operators = [key for key in when if key in OPERATORS]
    if operators and len(when) != 1:
        return [(path, f"{operators[0]!r} must be the only key of its mapping, found "
                 + ", ".join(repr(key) for key in when))]
    if operators:
        operator = operators[0]
        operand = when[operator]
        if operator == "not":
            if operand is None:
                return [((*path, operator), "'not' takes an expression")]
            return condition_problems(operand, (*path, operator))
        if isinstance(operand, str | bytes) or not isinstance(operand, Sequence):
            return [((*path, operator), f"{operator!r} takes a list of expressions")]
        if operator == "any" and not operand:
            return [((*path, operator), "'any' of an empty list never holds")]
        problems = []
        for index, branch in enumerate(operand):
            if branch is None:
                problems.append(((*path, operator, index), "an empty branch tests nothing"))
            else:
                problems += condition_problems(branch, (*path, operator, index))
        return problems
    problems = []
    for name, test in when.items():
        problems += _test_problems(name, test, (*path, name))
    return problems


def condition_attributes(when: Any, path: Path = ()) -> list[tuple[Path, str]]:
    """Every attribute name ``when`` tests, with the path of its key (invalid parts skipped:
    :func:`condition_problems` reports those)."""
    if not isinstance(when, Mapping):
        return []
    found: list[tuple[Path, str]] = []
    for key, value in when.items():
        if key == "not":
            found += condition_attributes(value, (*path, key))
        elif key in ("all", "any") and isinstance(value, Sequence) \
                and not isinstance(value, str | bytes):
            for index, branch in enumerate(value):
                found += condition_attributes(branch, (*path, key, index))
        elif isinstance(key, str) and key not in OPERATORS:
            found.append(((*path, key), key))
    return found


def _test_problems(name: Any, test: Any, path: Path) -> list[tuple[Path, str]]:
    if not isinstance(name, str) or not ATTRIBUTE_NAME.fullmatch(name):
        return [(path, f"{name!r} is not an attribute name (lowercase letters, digits, _)")]
    if name in LOOKALIKE_OPERATORS:
        return [(path, f"unknown operator {name!r}: use {LOOKALIKE_OPERATORS[name]}")]
    if name in ("settings", "documents"):
        return [(path, f"{name!r} is a service of the context, not an attribute to compare")]
    values: Sequence[Any]
    if isinstance(test, Mapping):
        if set(test) != {"in"}:
            return [(path, f"test of {name!r} may only use 'in', got {sorted(test)!r}")]
        values = test["in"]
        path = (*path, "in")
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            return [(path, f"'in' of {name!r} takes a list of values")]
        if not values:
            return [(path, f"'in' of {name!r} is empty: the test can never hold")]
    else:
        values = [test]
    problems = []
    for index, value in enumerate(values):
        where = (*path, index) if isinstance(test, Mapping) else path
        if value is None:
            problems.append((where, f"{name!r} compared with null can never hold "
                                    "(a missing attribute is never equal to anything)"))
        elif not isinstance(value, str | int | float | bool):
            problems.append((where, f"test of {name!r} compares with scalars, got {_kind(value)}"))
        elif name in INTEGER_ATTRIBUTES and (isinstance(value, bool)
                                             or not isinstance(value, int)):
            problems.append((where, f"{name} is an integer; {value!r} ({_kind(value)}) "
                                    "can never equal it"))
    return problems


def _kind(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
             dict: "mapping"}
    return names.get(type(value), type(value).__name__)


def _evaluate(expression: Any, ctx: AttributeSource) -> Outcome:
    if expression is None:
        return Outcome(Truth.TRUE)
    if not isinstance(expression, Mapping):
        raise InvalidCondition(f"expected a mapping or null, got {type(expression).__name__}")
    if not expression:
        raise InvalidCondition("an empty mapping tests nothing")
    operators = [key for key in expression if key in OPERATORS]
    if operators:
        if len(expression) != 1:
            raise InvalidCondition(
                f"{operators[0]!r} must be the only key of its mapping, found "
                + ", ".join(repr(key) for key in expression)
            )
        operator = operators[0]
        operand = expression[operator]
        if operator == "not":
            return _negate(_evaluate(operand, ctx))
        branches = _branches(operator, operand)
        outcomes = [_evaluate(branch, ctx) for branch in branches]
        return _combine_all(outcomes) if operator == "all" else _combine_any(outcomes)
    return _combine_all([_test_attribute(name, test, ctx) for name, test in expression.items()])


def _branches(operator: str, operand: Any) -> Sequence[Any]:
    if isinstance(operand, str | bytes) or not isinstance(operand, Sequence):
        raise InvalidCondition(f"{operator!r} takes a list of expressions")
    return operand


def _negate(outcome: Outcome) -> Outcome:
    if outcome.truth is Truth.TRUE:
        # A TRUE outcome's reason says what held, so the skip reason can name it.
        held = f": {outcome.reason}" if outcome.reason else ""
        return Outcome(Truth.FALSE, f"a negated condition holds{held}")
    if outcome.truth is Truth.FALSE:
        return Outcome(Truth.TRUE)
    return outcome


def _combine_all(outcomes: list[Outcome]) -> Outcome:
    for outcome in outcomes:
        if outcome.truth is Truth.FALSE:
            return outcome
    for outcome in outcomes:
        if outcome.truth is Truth.UNKNOWN:
            return outcome
    return Outcome(Truth.TRUE, " and ".join(o.reason for o in outcomes if o.reason))


def _combine_any(outcomes: list[Outcome]) -> Outcome:
    held = [outcome for outcome in outcomes if outcome.truth is Truth.TRUE]
    if held:
        return held[0]
    unknown = [outcome for outcome in outcomes if outcome.truth is Truth.UNKNOWN]
    if unknown:
        return unknown[0]
    reasons = "; ".join(outcome.reason for outcome in outcomes) or "no alternative given"
    return Outcome(Truth.FALSE, f"none of the alternatives holds ({reasons})")


def _test_attribute(name: Any, test: Any, ctx: AttributeSource) -> Outcome:
    if not isinstance(name, str) or not name:
        raise InvalidCondition(f"attribute names are strings, got {name!r}")
    allowed = _allowed_values(name, test)
    actual = ctx.condition_attribute(name)
    if actual is None:
        return Outcome(Truth.UNKNOWN, f"context attribute {name!r} is not set")
    if any(_same(actual, value) for value in allowed):
        return Outcome(Truth.TRUE, f"{name} is {actual!r}")
    expected = repr(allowed[0]) if len(allowed) == 1 else f"one of {list(allowed)!r}"
    return Outcome(Truth.FALSE, f"{name} is {actual!r}, not {expected}")


def _allowed_values(name: str, test: Any) -> tuple[Any, ...]:
    if isinstance(test, Mapping):
        if set(test) != {"in"}:
            raise InvalidCondition(f"test of {name!r} may only use 'in', got {sorted(test)!r}")
        values = test["in"]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise InvalidCondition(f"'in' of {name!r} takes a list of values")
        for value in values:
            _require_scalar(name, value)
        return tuple(values)
    _require_scalar(name, test)
    return (test,)


def _require_scalar(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str | int | float | bool):
        raise InvalidCondition(f"test of {name!r} compares with scalars, got {value!r}")


def _same(actual: Any, expected: Any) -> bool:
    # True == 1 in Python; a condition on a boolean attribute must not match the integer 1.
    if isinstance(actual, bool) != isinstance(expected, bool):
        return False
    return bool(actual == expected)
