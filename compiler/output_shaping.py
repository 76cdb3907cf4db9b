"""What an api tool returns after shaping (SPEC §16): its declared output schema's problems
and the shaped schema, decided once for the checks and the manifest.

:func:`shaped_output_schema` decides both what the compiler says about a declared output
schema (``compiler.checks.output_schema`` locates its problems) and what the manifest
carries (``compiler.normalize`` writes its schema): the schema of what the tool returns
after ``select`` (``compiler.output_projection``) and ``max_items``. A cut reply
(``max_chars``, the byte cap) is returned as text, so cuts do not change the schema. It
sits below both, so normalisation reads nothing from ``checks/``.

Codes: ``api-output-schema-size`` (error: deeper or larger than the runtime validates),
``api-output-schema-invalid`` (error: not a JSON Schema), ``api-output-schema-pattern``
(error: a pattern that could backtrack catastrophically), ``api-output-schema-max-items``
(error: a ``minItems`` above ``max_items``), ``api-output-schema-unsupported`` (warning:
a keyword outside the validated subset; the schema is dropped) and
``api-output-schema-dropped`` (warning: ``select`` does something the compiler cannot
follow; the schema is dropped). They are reported, located, by
``compiler.checks.output_schema``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.diagnostics import Code, Severity
from compiler.runtime.api.output_validation import (
    UNSUPPORTED_KEYWORDS,
    pattern_problem,
    schema_shape_problem,
)
from compiler.runtime.records import record

API_OUTPUT_SCHEMA_DROPPED = Code(
    "api-output-schema-dropped", "the output schema is dropped from the tool's result",
    Severity.WARNING)
API_OUTPUT_SCHEMA_INVALID = Code(
    "api-output-schema-invalid", "output_schema is not a valid JSON Schema")
API_OUTPUT_SCHEMA_MAX_ITEMS = Code(
    "api-output-schema-max-items",
    "output_schema asks for more items than response.max_items keeps")
API_OUTPUT_SCHEMA_PATTERN = Code(
    "api-output-schema-pattern", "an output_schema pattern is refused (unsafe or invalid regex)")
API_OUTPUT_SCHEMA_SIZE = Code(
    "api-output-schema-size", "output_schema is too large to check replies against")
API_OUTPUT_SCHEMA_UNSUPPORTED = Code(
    "api-output-schema-unsupported", "output_schema uses a keyword capc does not check",
    Severity.WARNING)
CODES = (
    API_OUTPUT_SCHEMA_DROPPED, API_OUTPUT_SCHEMA_INVALID, API_OUTPUT_SCHEMA_MAX_ITEMS,
    API_OUTPUT_SCHEMA_PATTERN, API_OUTPUT_SCHEMA_SIZE, API_OUTPUT_SCHEMA_UNSUPPORTED,
)

MAX_SCHEMA_CHARACTERS = 256 * 1024
SCHEMA_KEY = ("options", "output_schema")
SELECT_KEY = ("options", "response", "select")
# Keywords whose value is a schema, a list of schemas or a mapping of schemas.
_ONE_SCHEMA = ("additionalProperties", "items", "not", "if", "then", "else", "contains",
               "propertyNames", "unevaluatedItems", "unevaluatedProperties",
               "additionalItems")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions",
                "dependentSchemas")
# Each keyword above by its place in that order (the order subschemas are walked in).
_RANKED = {keyword: rank for rank, keyword in enumerate((*_ONE_SCHEMA, *_SCHEMA_LISTS,
                                                         *_SCHEMA_MAPS))}
_FIRST_LIST, _FIRST_MAP = len(_ONE_SCHEMA), len(_ONE_SCHEMA) + len(_SCHEMA_LISTS)

Path = tuple[str | int, ...]


@record(frozen=True, slots=True)
class OutputProblem:
    """One thing wrong with a declared output schema, where it is (a path in the document)."""

    path: Path
    is_error: bool
    code: Code
    message: str

    @classmethod
    def error(cls, path: Path, code: Code, message: str) -> OutputProblem:
        """An error at ``path``."""
        return cls(path, True, code, message)

    @classmethod
    def warning(cls, path: Path, code: Code, message: str) -> OutputProblem:
        """A warning at ``path``."""
        return cls(path, False, code, message)


@record(frozen=True, slots=True)
class ShapedOutput:
    """The schema the tool's result has after shaping (None: no output schema), and why not."""

    schema: Any
    problems: tuple[OutputProblem, ...] = ()


def shaped_output_schema(options: Mapping[str, Any]) -> ShapedOutput:
    """The shaped output schema of an api capability's ``options``, and its problems."""
    declared = options.get("output_schema")
    if declared is None:
        return ShapedOutput(None)
    response = options.get("response") or {}
    limit = response.get("max_items")
    problems = declared_problems(declared)
    if not problems and limit is not None:
        problems = list(max_items_problems(declared, int(limit)))
    if problems:
        return ShapedOutput(None, tuple(problems))
    schema: Any = declared
    select = response.get("select")
    if select is not None:
        import jmespath
        from jmespath.exceptions import JMESPathError

        from compiler.output_projection import CannotFollow, project

        try:
            parsed = jmespath.compile(select).parsed
        except JMESPathError:
            return ShapedOutput(None)  # check_api reports the syntax error
        try:
            schema = project(parsed, schema)
        except CannotFollow as reason:
            return ShapedOutput(None, (_dropped(SELECT_KEY, f"{reason}"),))
    if limit is not None:
        schema = _with_max_items(schema, int(limit))
    # Unshaped, the schema is the declared one, whose shape declared_problems passed.
    too_big = None if schema is declared else schema_shape_problem(schema)
    if too_big is not None:
        return ShapedOutput(None, (_dropped(SELECT_KEY, f"the shaped schema: {too_big}"),))
    return ShapedOutput(schema)


def _dropped(path: Path, reason: str) -> OutputProblem:
    return OutputProblem.warning(path, API_OUTPUT_SCHEMA_DROPPED,
                         f"the output schema is dropped (the tool's result will be text "
                         f"only): the compiler cannot follow select here: {reason}")


def _surely_valid(declared: Any) -> bool:
    """jsonschema-rs's "valid" verdict against the 2020-12 meta-schema, when installed (a
    cold compile then never imports jsonschema, 70 ms); anything else asks jsonschema,
    the reference for verdicts and messages. Proven equal by
    tests/checks/test_output_schema_meta.py::test_the_shortcut_never_calls_an_invalid_schema_valid."""
    if isinstance(declared, dict) and "$schema" in declared:
        return False  # another draft named: the reference decides
    try:
        import jsonschema_rs

        return bool(jsonschema_rs.meta.is_valid(declared))
    except Exception:  # not installed, or a value it cannot take (a YAML date...)
        return False


def _first_meta_error(declared: Any) -> Any:
    """jsonschema's first error of ``declared`` against the 2020-12 meta-schema, or None."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    return next(iter(validator.iter_errors(declared)), None)


def declared_problems(declared: Any, key: Path = SCHEMA_KEY) -> list[OutputProblem]:
    """Problems of the declared schema (at ``key`` of its document), most fundamental
    first (each stage needs the last)."""
    shape = schema_shape_problem(declared)
    if shape is None and len(json.dumps(declared, default=str)) > MAX_SCHEMA_CHARACTERS:
        shape = f"it is over {MAX_SCHEMA_CHARACTERS} characters"
    if shape is not None:
        return [OutputProblem.error(key, API_OUTPUT_SCHEMA_SIZE,
                              f"output_schema is too large to check replies against: {shape}")]
    invalid = None if _surely_valid(declared) else _first_meta_error(declared)
    if invalid is not None:
        return [OutputProblem.error((*key, *invalid.absolute_path),
                                    API_OUTPUT_SCHEMA_INVALID,
                              f"output_schema is not a valid JSON Schema: {invalid.message}")]
    problems: list[OutputProblem] = []
    if not _any_node_problem(declared):
        return problems
    for path, schema in _subschemas(declared, key):
        problems += _node_problems(path, schema)
    return problems


def _any_node_problem(declared: Any) -> bool:
    """Whether _node_problems finds anything in any schema _subschemas walks: the same
    schemas, in any order and without their paths (a derived schema usually has none,
    and then no path is built). Proven equal by
    tests/runtime/api/test_output_schema_shape.py::test_the_quick_node_check_is_the_walks
    """
    pending: list[Any] = [declared]
    while pending:
        node = pending.pop()
        if not isinstance(node, (dict, Mapping)):
            continue
        pattern = node.get("pattern")
        if "nullable" in node or not UNSUPPORTED_KEYWORDS.isdisjoint(node) or (
                isinstance(pattern, str) and pattern_problem(pattern) is not None):
            return True
        for keyword in node:
            rank = _RANKED.get(keyword)
            if rank is None:
                continue
            value = node[keyword]
            if rank < _FIRST_LIST:
                pending.append(value)
            elif rank < _FIRST_MAP:
                if isinstance(value, list):
                    pending += value
            elif isinstance(value, Mapping):
                pending += value.values()
    return False


def _node_problems(path: Path, schema: Mapping[str, Any]) -> list[OutputProblem]:
    problems = []
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        problem = pattern_problem(pattern)
        if problem is not None:
            problems.append(OutputProblem.error(
                (*path, "pattern"), API_OUTPUT_SCHEMA_PATTERN,
                f"pattern {pattern!r} is refused: {problem}"))
    for keyword in sorted(UNSUPPORTED_KEYWORDS.intersection(schema)):
        problems.append(OutputProblem.warning(
            (*path, keyword), API_OUTPUT_SCHEMA_UNSUPPORTED,
            f"the output schema is dropped (the tool's result will be text only): "
            f"{keyword!r} is outside the JSON Schema subset capc checks replies against"))
    if "nullable" in schema:
        problems.append(OutputProblem.warning(
            (*path, "nullable"), API_OUTPUT_SCHEMA_UNSUPPORTED,
            "the output schema is dropped (the tool's result will be text only): 'nullable' "
            "is OpenAPI's spelling; JSON Schema's is a type list such as [string, 'null']"))
    return problems


def max_items_problems(declared: Any, limit: int) -> Iterator[OutputProblem]:
    """A ``minItems`` above ``max_items`` anywhere in the declared schema: every list is cut
    to ``limit`` items, so such a list could never match."""
    for path, schema in _subschemas(declared, SCHEMA_KEY):
        least = schema.get("minItems")
        if isinstance(least, int) and least > limit:
            yield OutputProblem.error((*path, "minItems"), API_OUTPUT_SCHEMA_MAX_ITEMS,
                                f"minItems {least} is above response.max_items {limit}: "
                                "every list is cut to max_items, so no reply could match")


def _subschemas(schema: Any, path: Path) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every object schema in ``schema`` with its path (iterative; depth already bounded).

    A node's subschema keywords are taken from its own keys, in :data:`_RANKED` order (the
    keyword lists' order), not by asking it for each of the 20 keywords: the same walk,
    tests/runtime/api/test_output_schema_shape.py::test_the_subschema_walk_is_the_general_walks.
    """
    pending: list[tuple[Path, Any]] = [(path, schema)]
    while pending:
        where, node = pending.pop()
        # dict first: a C type check, where Mapping's is an ABC's (the same answer).
        if not isinstance(node, (dict, Mapping)):
            continue
        yield where, node
        for rank, keyword in sorted((_RANKED[key], key) for key in node if key in _RANKED):
            value = node[keyword]
            if rank < _FIRST_LIST:
                pending.append(((*where, keyword), value))
            elif rank < _FIRST_MAP:
                if isinstance(value, list):
                    pending += [((*where, keyword, index), item)
                                for index, item in enumerate(value)]
            elif isinstance(value, Mapping):
                pending += [((*where, keyword, name), item) for name, item in value.items()]


def _with_max_items(schema: Any, limit: int) -> Any:
    """``schema`` with every array limited to ``limit`` items (``max_items`` cuts every list
    of the result, at any depth; ``maxItems`` only ever constrains arrays)."""
    from compiler.output_projection import types_of  # only a max_items needs it

    if schema is True:
        return {"maxItems": limit}
    if not isinstance(schema, Mapping):
        return schema
    result = {key: _with_max_items_in(key, value, limit) for key, value in schema.items()}
    if "array" in types_of(result) and not ({"anyOf", "oneOf"} & result.keys()):
        result["maxItems"] = min(limit, result.get("maxItems", limit))
        if "prefixItems" in result and len(result["prefixItems"]) > limit:
            result["prefixItems"] = result["prefixItems"][:limit]
    return result


def _with_max_items_in(keyword: str, value: Any, limit: int) -> Any:
    if keyword in _ONE_SCHEMA:
        return _with_max_items(value, limit)
    if keyword in _SCHEMA_LISTS and isinstance(value, list):
        return [_with_max_items(item, limit) for item in value]
    if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
        return {name: _with_max_items(item, limit) for name, item in value.items()}
    return value
