"""Which OpenAPI the document is, and whether it is valid (openapi-spec-validator).

The validator is an optional dependency (``capc[openapi]``): without it the import still
runs, reading only what it needs, and says so once. It is given the document with no
URL handlers at all, so it can never fetch anything; a document with references to other
files is validated by the importer's own reading only.
"""

from __future__ import annotations

from collections.abc import Mapping

from compiler.authoring.openapi.document import DocumentFile
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.refs import scan_references
from compiler.diagnostics import Diagnostic

MAX_REPORTED = 20
SWAGGER_CONVERSION = (
    "convert it to OpenAPI 3 first and import the result: `npx swagger2openapi "
    "SPEC -o openapi.yaml` (the Mermade converter), or the Swagger Editor's "
    "'Convert to OpenAPI 3' (editor.swagger.io)")


def check_version(root: DocumentFile) -> str:
    """``3.0``/``3.1``/``3.2``; anything else (Swagger 2.0 included) is refused, located."""
    data = root.data
    if not isinstance(data, Mapping):
        raise ImportRefused((root.error((), "openapi-structure",
                                        "an OpenAPI document is a mapping at the top"),))
    if "swagger" in data:
        raise ImportRefused((root.error(("swagger",), "openapi-swagger2",
                                        f"Swagger {data['swagger']} is not read: "
                                        f"{SWAGGER_CONVERSION}"),))
    version = data.get("openapi")
    if not isinstance(version, str) or version[:4] not in ("3.0.", "3.1.", "3.2."):
        raise ImportRefused((root.error(("openapi",) if "openapi" in data else (),
                                        "openapi-version",
                                        f"openapi: {version!r} is not supported: capc reads "
                                        "OpenAPI 3.0, 3.1 and 3.2"),))
    return version[:3]


def validate_document(root: DocumentFile) -> tuple[Diagnostic, ...]:
    """What the validator found (warnings; at most :data:`MAX_REPORTED`)."""
    try:
        from jsonschema_path import SchemaPath
        from openapi_spec_validator.shortcuts import get_validator_cls
    except ImportError:
        return (root.warning((), "openapi-not-validated",
                             "openapi-spec-validator is not installed (pip install "
                             "'capc[openapi]'): the document is read but not validated"),)
    _, local = scan_references(root.data)
    if not local:
        return (root.warning((), "openapi-not-validated",
                             "the document refers to other files: it is not validated as "
                             "a whole (capc checks what it reads)"),)
    try:
        validator = get_validator_cls(root.data)(SchemaPath.from_dict(root.data, handlers={}))
        errors = []
        for error in validator.iter_errors():
            errors.append(error)
            if len(errors) >= MAX_REPORTED:
                break
    except RecursionError:  # the validator recurses into reference cycles
        return (root.warning((), "openapi-not-validated",
                             "the validator could not follow the document's reference cycles; "
                             "the document is read but not validated as a whole"),)
    except Exception as error:  # the validator's own failures: reported, never a traceback
        return (root.warning((), "openapi-not-validated",
                             f"the validator could not run ({type(error).__name__}); the "
                             "document is read but not validated"),)
    # Real public documents (OpenAI's among them) break the specification in places an
    # import never reads; refusing them would refuse the API. The findings are reported
    # (located where the validator says where), and the importer refuses what it reads
    # and cannot use, located, on its own.
    return tuple(
        root.warning(_document_path(error), "openapi-invalid",
                     f"not valid OpenAPI: {_first_line(error)}{_relative(error)}")
        for error in errors)


def _document_path(error: object) -> tuple[str | int, ...]:
    """The error's place in the document when the validator knows it (root-level checks)."""
    path = tuple(getattr(error, "absolute_path", ()))
    return path if getattr(error, "validator", None) != "$ref" else ()


def _relative(error: object) -> str:
    path = getattr(error, "json_path", "$")
    return "" if path == "$" else f" (at {path} of the schema being checked)"


def _first_line(error: object) -> str:
    text = str(getattr(error, "message", error)).strip().splitlines()
    return (text[0] if text else "invalid")[:300]
