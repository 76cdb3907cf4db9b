"""Public API documents from the APIs.guru directory (see ``directory_corpus``): Microsoft
Graph, Azure data-plane services, OpenAPI 3.1 documents and large REST APIs of many styles.
A subset of each in CI, every operation under ``-m slow``. The checks are the corpus tests'
own: compile under --strict with no diagnostics, both providers' SDK types accept every
tool, and the requests the tools send are valid for the document per openapi-core."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.compile_result import CompileOptions
from tests.authoring.openapi.corpus import load_document
from tests.authoring.openapi.directory_corpus import DOCUMENTS, directory_corpus
from tests.authoring.openapi.helpers import hermetic, messages
from tests.authoring.openapi.test_openapi_corpus import (
    check_requests_valid,
    check_tools_fit_both_providers,
    loopback,  # noqa: F401  (the module's loopback server fixture)
)
from tests.authoring.openapi.test_openapi_public_corpus import drop_unreadable_deep_objects
from tests.support.loopback import LoopbackServer

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import  # isort: skip

NAMES = tuple(DOCUMENTS)
# Requests checked by openapi-core: the documents whose sample requests were checked when
# they joined. Twilio's tools take arguments the sampler cannot make (patterns on every
# field); Graph's, Zoom's, Mailchimp's, DocuSign's and Xero's are still to be checked.
# GitLab's operations accept either of two credentials (a header or a query token): the
# sampler's requests carry neither, which openapi-core refuses (to look at). SendGrid's
# document contradicts itself (`send_at` is a date-time whose enum is "now").
REQUESTS_CHECKED = tuple(name for name in NAMES if name not in (
    "twilio", "graph", "zoom", "mailchimp", "docusign", "xero-accounting", "gitlab",
    "sendgrid"))


@pytest.mark.parametrize("name", NAMES)
async def test_subset_compiles_and_fits_both_providers(name: str, tmp_path: Path) -> None:
    await check_tools_fit_both_providers(directory_corpus(name), tmp_path)


def _for_validator(path: Path) -> dict[str, Any]:
    document = load_document(path)
    drop_unreadable_deep_objects(document)
    return document


@pytest.mark.parametrize("name", REQUESTS_CHECKED)
async def test_subset_requests_are_valid_for_the_document(
        name: str, tmp_path: Path, loopback: LoopbackServer) -> None:  # noqa: F811
    document = directory_corpus(name)
    await check_requests_valid(document, _for_validator(document.path), tmp_path, loopback)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CAPC_SLOW_TESTS"), reason="CAPC_SLOW_TESTS=1 runs it")
@pytest.mark.parametrize("name", NAMES)
def test_every_operation_imports_and_compiles_strict(name: str, tmp_path: Path) -> None:
    """The whole document: every operation either written or skipped with its reason, and
    the tree compiles under --strict with no diagnostics at all."""
    document = directory_corpus(name, full=True)
    out = tmp_path / "capabilities" / name
    outcome = run_import(OpenApiRequest(
        spec=str(document.path), output_dir=str(out), take_all=True,
        server=document.server, **hermetic(tmp_path / "capabilities")))
    assert outcome.exit_code == 0, messages(outcome)
    result = build([str(out)], options=CompileOptions(strict=True), cwd=tmp_path,
                   use_cache=False)
    assert result.manifest is not None and not result.diagnostics, \
        "\n".join(map(str, result.diagnostics[:20]))
