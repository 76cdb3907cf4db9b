"""One bad operation never refuses the whole document (SPEC §11): it is skipped with its
located reason and the others are imported; and the importer's facts are the model's."""

from __future__ import annotations

import json
from pathlib import Path

from compiler.authoring.openapi.generate import SENDABLE_METHODS
from compiler.runtime.manifest.model import API_METHODS
from tests.authoring.openapi.helpers import document, get, imported, messages, write


def test_a_remote_ref_in_one_operation_skips_it_and_imports_the_rest(tmp_path: Path) -> None:
    bad = {**get("make"), "requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": "https://example.com/schemas.yaml#/Thing"}}}}}
    spec = write(tmp_path, document({"/a": {"get": get("fine")}, "/b": {"post": bad}}))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    assert [Path(p).name for p in outcome.written] == ["fine.yaml"]
    found = messages(outcome)
    assert " openapi-ref-remote " in found and " openapi-skipped " in found
    line = next(n for n, text in enumerate(spec.read_text().splitlines(), 1)
                if "https://example.com" in text)
    assert f"api.yaml:{line}:" in found


def test_an_unsafe_operation_id_skips_that_operation_only(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("list\u202eAdmin")},
                                     "/b": {"get": get("fine")}}), "api.json")
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 0, messages(outcome)
    assert [Path(p).name for p in outcome.written] == ["fine.yaml"]
    assert "U+202E" in messages(outcome)


def test_the_sendable_methods_are_the_schemas() -> None:
    schema = json.loads((Path(__file__).parents[3] / "compiler" / "schema" / "json"
                         / "capability-v1.json").read_text())
    assert tuple(schema["$defs"]["apiOptions"]["properties"]["method"]["enum"]) == API_METHODS
    assert tuple(m.lower() for m in API_METHODS) == SENDABLE_METHODS
