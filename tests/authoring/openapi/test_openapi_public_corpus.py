"""GitHub's, Stripe's and Kubernetes' documents (see ``public_corpus``): a subset of each
in CI, every operation under ``-m slow``. The checks are the corpus tests' own: compile
under --strict with no diagnostics, both providers' SDK types accept every tool, and the
requests the tools send are valid for the document per openapi-core."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.mapping import FORM
from compiler.authoring.openapi.swagger2 import convert_swagger2
from compiler.build import build
from compiler.compile_result import CompileOptions
from tests.authoring.openapi.corpus import load_document
from tests.authoring.openapi.helpers import hermetic, messages
from tests.authoring.openapi.public_corpus import MEMBERS, public_corpus
from tests.authoring.openapi.test_openapi_corpus import (
    check_requests_valid,
    check_tools_fit_both_providers,
    loopback,  # noqa: F401  (the module's loopback server fixture)
)
from tests.support.loopback import LoopbackServer

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import  # isort: skip

NAMES = tuple(MEMBERS)


@pytest.mark.parametrize("name", NAMES)
async def test_subset_compiles_and_fits_both_providers(name: str, tmp_path: Path) -> None:
    await check_tools_fit_both_providers(public_corpus(name), tmp_path)


def _as_openapi3(path: Path) -> dict[str, Any]:
    document = load_document(path)
    # openapi-core reads OpenAPI 3 only: Kubernetes' Swagger 2.0 is given to it in the
    # OpenAPI 3 form capc reads it as (the conversion is capc's; the verdict is not).
    document = convert_swagger2(document) if "swagger" in document else document
    drop_unreadable_deep_objects(document)
    return document


def drop_unreadable_deep_objects(document: dict[str, Any]) -> None:
    """openapi-core cannot read a ``deepObject`` query parameter whose schema is not a
    plain object (Stripe's ``expand`` arrays, ``created`` as anyOf of object and integer):
    it fails on every request, sent or not. Those are left out of what it validates (an
    unknown query parameter is allowed); the path, the other parameters and the body are
    still checked. How capc sends them is tested byte for byte in test_openapi_mapping."""
    for item in document.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and isinstance(operation.get("parameters"), list):
                operation["parameters"] = [
                    p for p in operation["parameters"]
                    if not (isinstance(p, dict) and p.get("style") == "deepObject"
                            and p.get("schema", {}).get("type") != "object")]
            if isinstance(operation, dict):
                _flatten_deep_form_body(document, operation)


def _flatten_deep_form_body(document: dict[str, Any], operation: dict[str, Any]) -> None:
    """Stripe's form bodies declare ``deepObject`` encodings openapi-core cannot decode
    (it refuses every request). The validator is given the body's scalar fields with the
    document's own schemas (their values and the required ones are checked); the nested
    fields are capc's bracket encoding, tested byte for byte in test_openapi_mapping."""
    content = operation.get("requestBody", {}).get("content", {})
    form = content.get(FORM)
    if not isinstance(form, dict) or not any(
            isinstance(e, dict) and e.get("style") == "deepObject"
            for e in form.get("encoding", {}).values()):
        return
    schema = form.get("schema", {})
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    scalars = {n: f for n, f in schema.get("properties", {}).items()
               if isinstance(f, dict) and f.get("type") in ("string", "integer", "boolean")}
    content[FORM] = {"schema": {
        "type": "object", "properties": scalars,
        "required": [n for n in schema.get("required", []) if n in scalars]}}


@pytest.mark.parametrize("name", NAMES)
async def test_subset_requests_are_valid_for_the_document(
        name: str, tmp_path: Path, loopback: LoopbackServer) -> None:  # noqa: F811
    document = public_corpus(name)
    await check_requests_valid(document, _as_openapi3(document.path), tmp_path, loopback)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CAPC_SLOW_TESTS"), reason="CAPC_SLOW_TESTS=1 runs it")
@pytest.mark.parametrize("name", NAMES)
def test_every_operation_imports_and_compiles_strict(name: str, tmp_path: Path) -> None:
    """The whole document: every operation either written or skipped with its reason, and
    the tree compiles under --strict with no diagnostics at all."""
    document = public_corpus(name, full=True)
    out = tmp_path / "capabilities" / name
    outcome = run_import(OpenApiRequest(
        spec=str(document.path), output_dir=str(out), take_all=True,
        server=document.server, **hermetic(tmp_path / "capabilities")))
    assert outcome.exit_code == 0, messages(outcome)
    written = len(outcome.written)
    skipped = [d for d in outcome.diagnostics if d.code == "openapi-skipped"]
    assert written >= 0.85 * (written + len(skipped)), (written, len(skipped))
    result = build([str(out)], options=CompileOptions(strict=True), cwd=tmp_path,
                   use_cache=False)
    assert result.manifest is not None and not result.diagnostics, \
        "\n".join(map(str, result.diagnostics[:20]))
