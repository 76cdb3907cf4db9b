"""The JSON Schemas: found once, compiled once, errors turned into located diagnostics."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.records import record
from compiler.schema.kinds import PUBLISHED_SCHEMAS
from compiler.source.documents import SourceDocument

if TYPE_CHECKING:  # imported where used: with jsonschema-rs a valid tree never needs them
    import jsonschema
    import referencing

SCHEMA_NAME = Code("schema-name", "a name is not valid")
SCHEMA_PATTERN = Code("schema-pattern", "a value does not match its pattern")
SCHEMA_REQUIRED = Code("schema-required", "a required key is missing")
SCHEMA_TYPE = Code("schema-type", "a value has the wrong type")
SCHEMA_UNKNOWN_KEY = Code("schema-unknown-key", "an unknown key")
SCHEMA_VALUE = Code("schema-value", "a value is not one of those allowed")
# The other keywords of the published schemas that can fail on their own (the applicators
# report their subschemas' errors), each reported under its own name.
KEYWORD_CODES = {keyword: Code(f"schema-{keyword}", f"a value breaks the schema's {keyword}")
                 for keyword in ("exclusiveMinimum", "maxItems", "maxLength", "maxProperties",
                                 "maximum", "minItems", "minLength", "minProperties", "minimum",
                                 "not", "oneOf", "uniqueItems")}
CODES = (
    SCHEMA_NAME, SCHEMA_PATTERN, SCHEMA_REQUIRED, SCHEMA_TYPE, SCHEMA_UNKNOWN_KEY, SCHEMA_VALUE,
    *KEYWORD_CODES.values(),
)


# Beside this module in every install (the compiler fingerprint reads it there too); not
# importlib.resources, whose import (tempfile, zipfile...) every compile would pay.
_SCHEMA_FOLDER = Path(__file__).parent / "json"


def _refuse_remote(uri: str) -> referencing.Resource[Any]:
    import referencing.exceptions

    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


def offline_registry() -> referencing.Registry[Any]:
    """A registry that never fetches: a remote ``$ref`` fails instead of going online."""
    import referencing

    return referencing.Registry(retrieve=_refuse_remote)  # type: ignore[call-arg]


def schema_text(kind: str) -> str:
    """The shipped JSON text of the schema for ``kind`` (case-insensitive; ``Manifest``
    is the schema of the manifest file)."""
    for known, file_name in PUBLISHED_SCHEMAS.items():
        if known.lower() == kind.lower():
            return (_SCHEMA_FOLDER / file_name).read_text("utf-8")
    raise KeyError(kind)


@functools.cache
def validator_for(kind: str) -> jsonschema.protocols.Validator:
    """The compiled validator of one kind, built once per process."""
    import jsonschema

    schema = json.loads(schema_text(kind))
    base = jsonschema.validators.validator_for(schema)
    base.check_schema(schema)
    cls = jsonschema.validators.extend(base, {"pattern": _anchored_pattern})
    return cls(schema, registry=offline_registry())


@functools.cache
def _ecma_anchored(pattern: str) -> re.Pattern[str]:
    # In ECMA-262 (JSON Schema's dialect) a final "$" matches only at the very end; in
    # Python it also matches before a trailing newline, so "abc\n" would pass ^[a-z]+$.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _anchored_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not _ecma_anchored(pattern).search(instance):
        import jsonschema

        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@record(frozen=True, slots=True)
class SchemaProblem:
    """One schema violation before location: the path in the document and a message."""

    path: tuple[str | int, ...]
    code: Code
    message: str
    at_key: bool = False


@functools.cache
def fast_check_for(kind: str) -> Callable[[Any], bool] | None:
    """A compiled (Rust) validity check of ``kind``'s schema, when jsonschema-rs is installed.

    Only its "valid" verdict is used: anything it refuses (or cannot take) goes through
    jsonschema, which stays the reference for both the verdict and the messages. Proven
    equal by tests/schema/test_fast_schema_check.py::test_damaged_documents_agree.
    """
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.validator_for(json.loads(schema_text(kind))).is_valid


def validate_document(document: SourceDocument, kind: str) -> list[Diagnostic]:
    """Validate one document against its kind's schema; every violation, located."""
    fast_check = fast_check_for(kind)
    if fast_check is not None:
        try:
            if fast_check(document.data):
                return []
        except (ValueError, OverflowError, TypeError):
            pass  # a value the compiled check cannot take (a huge integer): ask jsonschema
    validator = validator_for(kind)
    if validator.is_valid(document.data):  # the fast path: nothing to locate
        return []
    problems: list[SchemaProblem] = []
    for error in validator.iter_errors(document.data):
        problems.extend(_explain(error))
    diagnostics = {
        Diagnostic.error(document.location(p.path, key=p.at_key), p.code, p.message)
        for p in problems
    }
    return sorted(diagnostics)


def _explain(error: jsonschema.ValidationError) -> list[SchemaProblem]:
    path = tuple(error.absolute_path)
    where = _dotted(path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extras = sorted(set(error.instance) - set(allowed))
        return [
            SchemaProblem((*path, key), SCHEMA_UNKNOWN_KEY,
                          f"unknown key {key!r} in {where}{_did_you_mean(key, allowed)}", True)
            for key in extras
        ]
    if error.validator == "required":
        return [SchemaProblem(path, SCHEMA_REQUIRED, f"{where}: {error.message}")]
    if error.validator in ("enum", "const"):
        options = error.validator_value if error.validator == "enum" else [error.validator_value]
        shown = ", ".join(json.dumps(option) for option in options)
        suggestion = ""
        if isinstance(error.instance, str):
            suggestion = _did_you_mean(error.instance, [o for o in options if isinstance(o, str)])
        one_of = "one of " if len(options) > 1 else ""
        return [SchemaProblem(path, SCHEMA_VALUE,
                              f"{where}: {json.dumps(error.instance)} is not allowed; "
                              f"expected {one_of}{shown}{suggestion}")]
    if error.validator == "type":
        return [SchemaProblem(path, SCHEMA_TYPE,
                              f"{where}: expected {_types(error.validator_value)}, "
                              f"got {_json_type(error.instance)}"
                              + ("" if error.instance is None else f" {_short(error.instance)}"))]
    if error.validator == "propertyNames" and error.context:
        bad = error.context[0].instance
        return [SchemaProblem((*path, bad), SCHEMA_NAME,
                              f"{where}: invalid name {bad!r}: {error.context[0].message}", True)]
    if error.validator in ("anyOf", "oneOf") and error.context:
        import jsonschema.exceptions

        best = jsonschema.exceptions.best_match(error.context)
        return _explain(best)
    if error.validator == "pattern" and isinstance(error.schema, dict) and isinstance(
            error.schema.get("x-message"), str):  # the schema's words, not its regex
        return [SchemaProblem(path, SCHEMA_PATTERN, f"{where}: {_short(error.instance)} is "
                              f"refused: {error.schema['x-message']}")]
    if error.validator == "pattern":
        return [SchemaProblem(path, SCHEMA_PATTERN,
                              f"{where}: {_short(error.instance)} does not match "
                              f"{error.validator_value}"
                              f"{_pattern_suggestion(error.instance, error.validator_value)}")]
    if error.validator in _SIZES and isinstance(error.validator_value, int):
        return [SchemaProblem(path, _keyword_code(error.validator),
                              f"{where}: {_short(error.instance)} has {_size(error.instance)} "
                              f"{_SIZES[str(error.validator)]}; at most "
                              f"{error.validator_value} allowed")]
    return [SchemaProblem(path, _keyword_code(error.validator), f"{where}: {_message(error)}")]


def _keyword_code(keyword: object) -> Code:
    """The declared code of a schema keyword; a keyword no published schema uses (a test
    holds the table to the schemas) is still reported under its own name."""
    return KEYWORD_CODES.get(str(keyword)) or Code(f"schema-{keyword}", "a schema rule")


# An upper size limit's message names the size and the limit, never the whole value
# (which can be a list of thousands of items).
_SIZES = {"maxItems": "items", "maxLength": "characters", "maxProperties": "keys"}


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, dict)) else 0


def _message(error: jsonschema.ValidationError) -> str:
    """jsonschema's message with the offending value shortened: it starts with the value's
    repr, which for a 20,000-item list would be a line of hundreds of kilobytes."""
    message = str(error.message)
    shown = repr(error.instance)
    if message.startswith(shown):
        return _short(error.instance) + message[len(shown):]
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 3] + "..."


def _pattern_suggestion(value: Any, pattern: str) -> str:
    """"; did you mean 'get_weather'?" for the code ``Get-Weather``: the value with letters
    lowercased and every other run of characters made one '_', when that matches. Only for
    codes, and only for ASCII text (a look-alike letter is not a typo to correct)."""
    from compiler.schema.legacy import CODE_PATTERN

    if pattern != CODE_PATTERN.pattern or not isinstance(value, str) or len(value) > 200 \
            or not value.isascii():
        return ""
    candidate = re.sub(r"[^a-z0-9_]+", "_", value.strip().lower()).strip("_")
    candidate = re.sub(r"^[^a-z]+", "", candidate)
    if not candidate or candidate == value or not _ecma_anchored(pattern).search(candidate):
        return ""
    return f"; did you mean {candidate!r}?"


def _did_you_mean(word: str, candidates: list[str]) -> str:
    import difflib  # a "did you mean" is only ever needed for an error

    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _dotted(path: tuple[str | int, ...]) -> str:
    if not path:
        return "document"
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p)
                   for i, p in enumerate(path))


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string",
               list: "array", dict: "object", type(None): "null"}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _types(expected: Any) -> str:
    return " or ".join(expected) if isinstance(expected, list) else str(expected)


MAX_MESSAGE = 300


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
