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
    """``(path in the document, message)`` of each violation; the Rust validator when
    installed (a 3 MB document in milliseconds), else jsonschema."""
    try:
        import jsonschema_rs
    except ImportError:
        from jsonschema import validators

        checker = validators.validator_for(schema)(schema)
        return [(tuple(error.absolute_path), _first_line(error.message))
                for error in checker.iter_errors(data)]
    validator = jsonschema_rs.validator_for(schema)
    return [(tuple(error.instance_path), _first_line(error.message))
            for error in validator.iter_errors(data)]


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return (lines[0] if lines else "invalid")[:300]
