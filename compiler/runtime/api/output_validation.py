"""A small, bounded validator for the JSON Schema subset capc emits as output schemas.

The compiler refuses or drops any other schema (``compiler.checks.output_schema``), so the
runtime needs no general validator (and, a leaf, imports no jsonschema). What it checks:
``type``, ``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``,
``items``, ``prefixItems``, ``minItems``/``maxItems``, ``uniqueItems``,
``minLength``/``maxLength``, ``pattern``, ``minimum``/``maximum`` and their exclusive
forms, ``multipleOf``, ``minProperties``/``maxProperties``, ``anyOf``/``oneOf``/``allOf``,
and boolean schemas. Other keywords are annotations.

Bounds, because a reply is hostile data and a manifest may be edited by hand:

- work: every (schema node, value node) visit is charged; the budget is proportional to
  the value's size, so ``anyOf`` nested in ``anyOf`` cannot multiply the time. A budget
  spent is a failed validation, with a note that says so;
- depth: a schema deeper than :data:`MAX_SCHEMA_DEPTH` is refused when it is read;
- patterns: only patterns :func:`pattern_problem` accepts run (no nested or adjacent
  unbounded repeats, no back-references or look-arounds), against strings short enough
  that even their worst case is cheap; a pattern that cannot run says so in a note and
  is not checked (never a frozen event loop).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from compiler.runtime.api.schema_shape import within_shape_limits
from compiler.runtime.records import record

# What a schema may use to constrain values (the compiler's subset). Everything else a
# JSON Schema can say is either an annotation or refused at compile time.
VALIDATION_KEYWORDS = frozenset({
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength",
    "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minProperties", "maxProperties", "anyOf", "oneOf", "allOf",
})
# JSON Schema keywords that constrain values and are outside the subset.
UNSUPPORTED_KEYWORDS = frozenset({
    "$ref", "$dynamicRef", "$recursiveRef", "not", "if", "then", "else",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
    "dependencies", "unevaluatedProperties", "unevaluatedItems", "contains", "minContains",
    "maxContains", "additionalItems",
})
JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
MAX_SCHEMA_DEPTH = 64
MAX_SCHEMA_NODES = 20_000
# Work units per value node, and the allowance for small values.
WORK_FACTOR = 32
BASE_WORK = 10_000
# A pattern runs on a string when (string length) ** (unbounded repeats + 1) is at most
# this (Python's regular expressions backtrack: k sequential unbounded repeats can cost
# about n ** (k + 1) steps on a string of n characters).
PATTERN_STEPS = 4_000_000
MAX_UNBOUNDED_REPEATS = 3


class OutputSchemaError(ValueError):
    """A schema the runtime will not validate with (too deep, too large, malformed)."""


@record(frozen=True, slots=True)
class Validation:
    """The outcome: ``problem`` is None when the value matches; ``notes`` says what was
    not checked (a pattern on a long string)."""

    problem: str | None
    notes: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """True when the value matches the schema."""
        return self.problem is None


@functools.lru_cache(maxsize=512)
def pattern_cost(pattern: str) -> int | None:
    """How many unbounded repeats ``pattern`` has, or None when it is unsafe or invalid.

    Unsafe: a back-reference, a look-around, a repeat inside a repeat, or more than
    :data:`MAX_UNBOUNDED_REPEATS` unbounded repeats. Parsing is linear in the pattern.
    """
    if len(pattern) > 1_000:
        return None
    import re._parser as sre_parse

    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    count = _repeats(parsed, inside_repeat=False)
    return None if count is None or count > MAX_UNBOUNDED_REPEATS else count


def _repeats(items: Any, inside_repeat: bool) -> int | None:
    """The unbounded repeats of a parsed pattern; None for a shape that backtracks badly.

    Inside a repeat of more than one, nothing may repeat or branch again: ``(a+)+``,
    ``(a|a)*`` and ``(a?a?)*`` match one text in exponentially many ways.
    """
    import re._constants as sre_constants

    repeats = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
               getattr(sre_constants, "POSSESSIVE_REPEAT", None)}
    refused = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS,
               sre_constants.ASSERT, sre_constants.ASSERT_NOT}
    total = 0
    for op, argument in items:
        if op in refused or (inside_repeat and (op in repeats or op == sre_constants.BRANCH)):
            return None
        if op in repeats:
            _, high, body = argument
            unbounded = high == sre_constants.MAXREPEAT or high > 1_000
            inner = _repeats(body, high > 1)
            if inner is None:
                return None
            total += inner + (1 if unbounded else 0)
        elif op == sre_constants.SUBPATTERN:
            inner = _repeats(argument[-1], inside_repeat)
            if inner is None:
                return None
            total += inner
        elif op == sre_constants.BRANCH:
            for branch in argument[1]:
                inner = _repeats(branch, inside_repeat)
                if inner is None:
                    return None
                total += inner
    return total


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is refused as an output-schema ``pattern`` (None: it is accepted)."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        return f"not a valid regular expression ({error})"
    if pattern_cost(pattern) is None:
        return ("it can take exponential or high polynomial time on a hostile reply "
                "(a repeat or alternation inside a repeat, a back-reference or look-around, "
                f"or more than "
                f"{MAX_UNBOUNDED_REPEATS} unbounded repeats)")
    return None


def schema_shape_problem(schema: Any) -> str | None:
    """Why ``schema`` is too deep or too large to validate with (None: it is fine).

    Iterative and stops at the limits, so a 10,000-deep or 1 MiB schema costs no more
    than the limits. A schema within both (the usual answer) is told by counting it level
    by level; one past either is walked in order for the limit met first. Proven equal by
    tests/runtime/api/test_output_schema_shape.py::test_the_shape_problem_is_the_general_walks
    """
    if within_shape_limits(schema, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES):
        return None
    return _first_shape_problem(schema)


def _first_shape_problem(schema: Any) -> str | None:
    pending: list[tuple[Any, int]] = [(schema, 0)]
    nodes = 0
    while pending:
        node, depth = pending.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_NODES:
            return f"it has more than {MAX_SCHEMA_NODES} nodes"
        if depth > MAX_SCHEMA_DEPTH:
            return f"it is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        # Leaves and dicts first: C type checks, where Mapping's is an ABC's (the same
        # answers; a schema is mostly strings and dicts).
        if isinstance(node, str | int | float | None):
            continue
        if isinstance(node, (dict, Mapping)):
            child_depth = depth + 1
            pending += [(child, child_depth) for child in node.values()]
        elif isinstance(node, list | tuple):
            child_depth = depth + 1
            pending += [(child, child_depth) for child in node]
    return None


class _Budget(Exception):
    """The work budget is spent."""


class _Run:
    """One validation: its budget and its notes."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.pattern_left = PATTERN_STEPS * 4
        self.notes: list[str] = []

    def charge(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _Budget

    def check(self, schema: Any, value: Any, path: str) -> str | None:
        self.charge()
        if schema is True or schema == {}:
            return None
        if schema is False:
            return f"{path}: no value is allowed here"
        if not isinstance(schema, Mapping):
            return None
        kind = schema.get("type")
        if kind is not None:
            allowed = (kind,) if isinstance(kind, str) else tuple(kind)
            if not any(_is_type(value, name) for name in allowed):
                return f"{path}: expected {' or '.join(allowed)}, got {_type_name(value)}"
        if "const" in schema and not _equal(value, schema["const"]):
            return f"{path}: expected {_short(schema['const'])}"
        if "enum" in schema and not any(_equal(value, option) for option in schema["enum"]):
            return f"{path}: {_short(value)} is not one of {_short(schema['enum'])}"
        problem = (self._object(schema, value, path) if isinstance(value, dict)
                   else self._array(schema, value, path) if isinstance(value, list)
                   else self._string(schema, value, path) if isinstance(value, str)
                   else self._number(schema, value, path) if _is_type(value, "number")
                   else None)
        return problem or self._combined(schema, value, path)

    def _combined(self, schema: Mapping[str, Any], value: Any, path: str) -> str | None:
        for part in schema.get("allOf", ()):
            problem = self.check(part, value, path)
            if problem:
                return problem
        if "anyOf" in schema:
            problems = [self.check(part, value, path) for part in schema["anyOf"]]
            if all(problems):
                return _first_of(problems, path)
        if "oneOf" in schema:
            problems = [self.check(part, value, path) for part in schema["oneOf"]]
            matched = sum(1 for problem in problems if problem is None)
            if matched == 0:
                return _first_of(problems, path)
            if matched > 1:
                return f"{path}: matches {matched} of the oneOf schemas, not exactly one"
        return None

    def _object(self, schema: Mapping[str, Any], value: dict[str, Any],
                path: str) -> str | None:
        for name in schema.get("required", ()):
            if name not in value:
                return f"{path}: missing required field {name!r}"
        if len(value) < schema.get("minProperties", 0):
            return f"{path}: fewer than {schema['minProperties']} fields"
        if len(value) > schema.get("maxProperties", math.inf):
            return f"{path}: more than {schema['maxProperties']} fields"
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            child = f"{path}.{name}" if name.isidentifier() else f"{path}[{json.dumps(name)}]"
            if name in properties:
                problem = self.check(properties[name], item, child)
            elif extra is False:
                problem = f"{path}: unexpected field {name!r}"
            else:
                problem = self.check(extra, item, child)
            if problem:
                return problem
        return None

    def _array(self, schema: Mapping[str, Any], value: list[Any], path: str) -> str | None:
        if len(value) < schema.get("minItems", 0):
            return f"{path}: {len(value)} items, fewer than {schema['minItems']}"
        if len(value) > schema.get("maxItems", math.inf):
            return f"{path}: {len(value)} items, more than {schema['maxItems']}"
        prefix = schema.get("prefixItems") or ()
        items = schema.get("items", True)
        for index, item in enumerate(value):
            part = prefix[index] if index < len(prefix) else items
            problem = self.check(part, item, f"{path}[{index}]")
            if problem:
                return problem
        if schema.get("uniqueItems"):
            seen = set()
            for item in value:
                self.charge()
                key = json.dumps(item, sort_keys=True, default=str)
                if key in seen:
                    return f"{path}: items are not unique"
                seen.add(key)
        return None

    def _string(self, schema: Mapping[str, Any], value: str, path: str) -> str | None:
        if len(value) < schema.get("minLength", 0):
            return f"{path}: shorter than {schema['minLength']} characters"
        if len(value) > schema.get("maxLength", math.inf):
            return f"{path}: longer than {schema['maxLength']} characters"
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not self._matches(pattern, value, path):
            return f"{path}: does not match the pattern {pattern!r}"
        return None

    def _matches(self, pattern: str, value: str, path: str) -> bool:
        """Whether ``value`` matches; True (with a note) when it cannot be checked safely."""
        repeats = pattern_cost(pattern)
        steps = (len(value) + 1) ** ((repeats or 0) + 1)
        if repeats is None or steps > PATTERN_STEPS or steps > self.pattern_left:
            if len(self.notes) < 3:
                self.notes.append(f"the pattern at {path} was not checked "
                                  f"({'unsafe pattern' if repeats is None else 'too long'})")
            return True
        self.pattern_left -= steps
        return re.search(pattern, value) is not None

    def _number(self, schema: Mapping[str, Any], value: float, path: str) -> str | None:
        for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            limit = schema.get(keyword)
            if isinstance(limit, int | float) and _breaks(keyword, value, limit):
                return f"{path}: {value} breaks {keyword} {limit}"
        step = schema.get("multipleOf")
        if isinstance(step, int | float) and step > 0:
            quotient = value / step
            if math.isfinite(quotient) and not float(quotient).is_integer():
                return f"{path}: {value} is not a multiple of {step}"
        return None


def _breaks(keyword: str, value: float, limit: float) -> bool:
    if keyword == "minimum":
        return value < limit
    if keyword == "maximum":
        return value > limit
    if keyword == "exclusiveMinimum":
        return value <= limit
    return value >= limit


def _first_of(problems: list[str | None], path: str) -> str:
    named = [problem for problem in problems if problem]
    return f"{path}: matches none of the alternatives ({named[0]})" if named else path


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return False


def _type_name(value: Any) -> str:
    return next((name for name in ("null", "boolean", "integer", "number", "string", "array",
                                   "object") if _is_type(value, name)), type(value).__name__)


def _equal(left: Any, right: Any) -> bool:
    """JSON equality: 1 == 1.0, but True is not 1 and "1" is not 1."""
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    if _is_type(left, "number") and _is_type(right, "number"):
        return bool(left == right)
    return type(left) is type(right) and not isinstance(left, list | dict) and left == right


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_output(schema: Any, value: Any, value_size: int) -> Validation:
    """Whether ``value`` (from a reply of about ``value_size`` characters) matches ``schema``.

    Bounded: a validation that would need more work than the value's size allows fails
    with a note saying so, rather than run on.
    """
    run = _Run(WORK_FACTOR * max(value_size, 0) + BASE_WORK)
    try:
        problem = run.check(schema, value, "$")
    except _Budget:
        problem = "the reply is too costly to check against its schema"
    except RecursionError:  # pragma: no cover - depth is bounded when the schema is read
        problem = "the schema is too deep to check"
    return Validation(problem, tuple(run.notes))
