"""One ranking (issue 30, item 2): ``capc import openapi --check`` and ``capc diff`` rank
the same change the same way, because both ask :func:`compiler.review.ranking.rank_change`.

Each pair is two versions of one document: the committed files come from the first,
``--check`` compares them with the second, and ``capc diff`` compares the manifests the
two imports compile to.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.review.diff import diff_manifests
from compiler.review.ranking import Rank, diff_rank, rank_change
from tests.authoring.openapi.helpers import hermetic, write

BASE: dict[str, Any] = {
    "openapi": "3.0.3", "info": {"title": "Ranked", "version": "1"},
    "servers": [{"url": "https://api.example.com/v1"}],
    "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query",
                                               "name": "key"}}},
    "paths": {"/things": {"get": {
        "operationId": "listThings", "description": "List the things.",
        "security": [{"key": []}],
        "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}},
                       {"name": "state", "in": "query",
                        "schema": {"type": "string", "enum": ["open", "closed"]}}],
        "responses": {"200": {"description": "ok"}}}}},
}


def _operation(document: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = document["paths"]["/things"]["get"]
    return found


def _plain_http(document: dict[str, Any]) -> None:
    document["servers"] = [{"url": "http://api.example.com/v1"}]
    _operation(document)["security"] = []


def _plain_http_before(document: dict[str, Any]) -> None:
    _operation(document)["security"] = []


def _new_host(document: dict[str, Any]) -> None:
    document["servers"] = [{"url": "https://api.elsewhere.example/v1"}]


def _new_placeholder(document: dict[str, Any]) -> None:
    document["components"]["securitySchemes"]["token"] = {"type": "http",
                                                          "scheme": "bearer"}
    _operation(document)["security"] = [{"key": [], "token": []}]


def _credential_header(document: dict[str, Any]) -> None:
    document["components"]["securitySchemes"]["key"]["in"] = "header"
    document["components"]["securitySchemes"]["key"]["name"] = "X-Api-Key"


def _argument_removed(document: dict[str, Any]) -> None:
    del _operation(document)["parameters"][0]


def _enum_widened(document: dict[str, Any]) -> None:
    _operation(document)["parameters"][1]["schema"]["enum"].append("all")


def _description(document: dict[str, Any]) -> None:
    _operation(document)["description"] = "List every thing there is."


# name: (change to the old document, change to the new one, the rank both must give)
PAIRS = {
    "https to http": (_plain_http_before, _plain_http, Rank.SECURITY),
    "new host": (None, _new_host, Rank.SECURITY),
    "new placeholder": (None, _new_placeholder, Rank.SECURITY),
    "new credential header": (None, _credential_header, Rank.SECURITY),
    "enum widened": (None, _enum_widened, Rank.SECURITY),
    "argument removed": (None, _argument_removed, Rank.CONTRACT),
    "description changed": (None, _description, Rank.OTHER),
}


def _version(change: Any) -> dict[str, Any]:
    document = copy.deepcopy(BASE)
    if change is not None:
        change(document)
    return document


def _imported(tmp_path: Path, name: str, document: dict[str, Any]) -> tuple[Path, Any]:
    spec = write(tmp_path, document, f"{name}.json")
    out = tmp_path / name / "ranked"
    outcome = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), take_all=True,
                                        **hermetic(out)))
    assert outcome.exit_code == 0, [str(d) for d in outcome.diagnostics]
    result = build([str(out)], options=CompileOptions(), cwd=tmp_path, use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    return spec, result.manifest


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_check_and_diff_rank_a_change_the_same(tmp_path: Path, pair: str) -> None:
    before, after, expected = PAIRS[pair]
    old_spec, old_manifest = _imported(tmp_path, "old", _version(before))
    new_spec, new_manifest = _imported(tmp_path, "new", _version(after))
    # --check: the committed files (the old import) against the new document.
    old_spec.write_bytes(new_spec.read_bytes())
    check = run_import(OpenApiRequest(spec=str(old_spec), output_dir=str(
        tmp_path / "old" / "ranked"), check=True, **hermetic(tmp_path / "old")))
    assert check.exit_code == 1, check.lines
    report = json.loads(run_import(OpenApiRequest(
        spec=str(old_spec), output_dir=str(tmp_path / "old" / "ranked"), check=True,
        output_format="json", **hermetic(tmp_path / "old"))).lines[0])
    check_kinds = {change["kind"] for change in report["changes"]}
    check_rank = min((rank_change(kind) for kind in check_kinds), key=list(Rank).index)
    diff = diff_manifests(old_manifest, new_manifest)
    assert (check_rank, diff_rank(diff)) == (expected, expected), (check_kinds, diff)
    # The security-relevant kinds are the same findings in both.
    assert {kind for kind in check_kinds if rank_change(kind) is Rank.SECURITY} == \
        {finding.kind for finding in diff.security}
