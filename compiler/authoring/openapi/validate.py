"""Which OpenAPI the document is, and whether it is valid.

The document is checked against the OpenAPI Initiative's JSON Schema of its version, as
openapi-spec-validator ships it (the optional ``capc[openapi]``; without it the import
still runs and says so once), with the Rust validator capc already uses: milliseconds on
a 3 MB document, where openapi-spec-validator's own walk takes 12 s on OpenAI's. Schemas
inside the document are then checked by the importer as it reads them. No reference is
resolved here, so nothing can be fetched.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.authoring.openapi.document import DocumentFile
from compiler.authoring.openapi.document_text import clean_text, window
from compiler.authoring.openapi.problems import ImportRefused
from compiler.diagnostics import Code, Diagnostic, Severity

OPENAPI_INVALID = Code("openapi-invalid", "the document is not valid OpenAPI", Severity.WARNING)
OPENAPI_NOT_VALIDATED = Code(
    "openapi-not-validated", "the document is not validated (openapi-spec-validator missing)",
    Severity.WARNING)
OPENAPI_STRUCTURE = Code(
    "openapi-structure", "the document's structure is not what OpenAPI requires")
OPENAPI_SWAGGER2 = Code("openapi-swagger2", "a Swagger 2.0 document")
OPENAPI_VERSION = Code("openapi-version", "the OpenAPI version is not one capc reads")
CODES = (
    OPENAPI_INVALID, OPENAPI_NOT_VALIDATED, OPENAPI_STRUCTURE, OPENAPI_SWAGGER2, OPENAPI_VERSION,
)

MAX_REPORTED = 20
SWAGGER_CONVERSION = (
    "convert it to OpenAPI 3 first and import the result: `npx swagger2openapi "
    "SPEC -o openapi.yaml` (the Mermade converter), or the Swagger Editor's "
    "'Convert to OpenAPI 3' (editor.swagger.io)")


def check_version(root: DocumentFile) -> str:
    """``2.0``/``3.0``/``3.1``/``3.2``; anything else is refused, located."""
    data = root.data
    if not isinstance(data, Mapping):
        raise ImportRefused((root.error((), OPENAPI_STRUCTURE,
                                        "an OpenAPI document is a mapping at the top"),))
    if "swagger" in data:
        if str(data["swagger"]) == "2.0":
            return "2.0"  # read through compiler.authoring.openapi.swagger2
        raise ImportRefused((root.error(("swagger",), OPENAPI_SWAGGER2,
                                        f"Swagger {data['swagger']} is not read: "
                                        f"{SWAGGER_CONVERSION}"),))
    version = data.get("openapi")
    if not isinstance(version, str) or version[:4] not in ("3.0.", "3.1.", "3.2."):
        raise ImportRefused((root.error(("openapi",) if "openapi" in data else (),
                                        OPENAPI_VERSION,
                                        f"openapi: {version!r} is not supported: capc reads "
                                        "OpenAPI 3.0, 3.1 and 3.2"),))
    return version[:3]


def validate_document(root: DocumentFile) -> tuple[Diagnostic, ...]:
    """The document against the official OpenAPI schema of its version: findings are
    located warnings (at most :data:`MAX_REPORTED`)."""
    schema = _official_schema(str(root.data.get("openapi", root.data.get("swagger", "")))[:3])
    if schema is None:
        return (root.warning((), OPENAPI_NOT_VALIDATED,
                             "openapi-spec-validator is not installed (pip install "
                             "'capc[openapi]'): the document is read but not validated"),)
    try:
        findings = _findings(schema, root.data)
    except RecursionError:
        return (root.warning((), OPENAPI_NOT_VALIDATED,
                             "the document is nested too deeply to validate"),)
    # Real public documents (Anthropic's, Cohere's) break the specification in places an
    # import never reads; refusing them would refuse the API. The findings are reported,
    # and the importer refuses, located, what it reads and cannot use.
    return tuple(root.warning(path, OPENAPI_INVALID, f"not valid OpenAPI: {message}")
                 for path, message in findings[:MAX_REPORTED])


def _official_schema(version: str) -> Any:
    """The OpenAPI Initiative's JSON Schema for ``version``, as openapi-spec-validator
    ships it (None without the package)."""
    folder = {"2.0": "v2.0", "3.0": "v3.0", "3.1": "v3.1", "3.2": "v3.2"}.get(version)
    # Found, not imported: the package's __init__ pulls in its whole validator (seconds).
    spec = importlib.util.find_spec("openapi_spec_validator")
    if spec is None or spec.origin is None or folder is None:
        return None
    schema = Path(spec.origin).parent / "resources" / "schemas" / folder / "schema.json"
    try:
        return json.loads(schema.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _findings(schema: Any, data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """``(path in the document, reason)`` of each violation; the Rust validator when
    installed (a 3 MB document in milliseconds), else jsonschema."""
    try:
        import jsonschema_rs
    except ImportError:
        from jsonschema import validators
        from jsonschema.exceptions import best_match

        checker = validators.validator_for(schema)(schema)
        found: list[tuple[tuple[str | int, ...], str]] = []
        for error in checker.iter_errors(data):
            leaf = best_match([error]) or error
            found.append((tuple(leaf.absolute_path), _reason([leaf.message])))
            if len(found) >= MAX_REPORTED:
                break
        return found
    validator = jsonschema_rs.validator_for(schema)
    rs_found: list[tuple[tuple[str | int, ...], str]] = []
    for error in validator.iter_errors(data):
        leaves = _leaves(error, 0)
        rs_found.append((_deepest(leaves, tuple(error.instance_path)),
                         _reason([leaf.message for leaf in leaves])))
        if len(rs_found) >= MAX_REPORTED:
            break
    return rs_found


# How far the reason is looked for inside oneOf/anyOf alternatives, and how many of the
# chosen alternative's errors are named: the official schemas nest oneOf a few deep.
_MAX_NESTING = 8
_MAX_LEAVES = 3
MAX_REASON = 300
_PER_LEAF = 160


def _leaves(error: Any, depth: int) -> list[Any]:
    """The errors that say why ``error`` holds: inside a failed ``oneOf``/``anyOf``, the
    alternative the document came closest to (a ``$ref``-only alternative is the last
    resort; then the fewest errors, the deepest first), recursively."""
    context = getattr(error.kind, "context", None)
    if not context or depth >= _MAX_NESTING:
        return [error]
    alternatives = [list(alternative) for alternative in context if alternative]
    if not alternatives:
        return [error]
    scores = [(_only_reference(alt), len(alt), -max(len(e.instance_path) for e in alt))
              for alt in alternatives]
    # Alternatives as close as each other (parameter kinds differing by `in`): each says
    # what it wanted, so the reason is not one arbitrary alternative's.
    tied = [alt for alt, score in zip(alternatives, scores, strict=True)
            if score == min(scores)]
    chosen = tied[0] if len(tied[0]) > 1 else [alt[0] for alt in tied]
    leaves: list[Any] = []
    for sub in chosen[:_MAX_LEAVES]:
        leaves += _leaves(sub, depth + 1)
    return leaves[:_MAX_LEAVES]


def _only_reference(alternative: list[Any]) -> bool:
    """Whether an alternative failed only for want of a ``$ref`` (the Reference Object)."""
    return all(str(error.message).startswith('"$ref"') for error in alternative)


def _deepest(leaves: list[Any], fallback: tuple[str | int, ...]) -> tuple[str | int, ...]:
    paths = [tuple(leaf.instance_path) for leaf in leaves]
    deepest = max(paths, key=len, default=fallback)
    return deepest if len(deepest) >= len(fallback) else fallback


def _reason(messages: list[str]) -> str:
    """The validator's messages as one bounded, visible line (the document's text they
    quote is cut, and no control, bidi or invisible character is kept)."""
    parts = [clean_text(_first_line(window(str(message), _PER_LEAF)), _PER_LEAF)
             for message in messages]
    return clean_text("; ".join(dict.fromkeys(p for p in parts if p)) or "invalid",
                      MAX_REASON)


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else "invalid"
