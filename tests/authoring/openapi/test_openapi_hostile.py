"""Whatever shape a document's values take, the import answers with files or located
diagnostics: never a traceback, never a partial output."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from tests.authoring.openapi.helpers import hermetic

KEYS = st.sampled_from(["type", "properties", "items", "allOf", "oneOf", "anyOf", "$ref",
                        "required", "enum", "nullable", "readOnly", "format", "default",
                        "additionalProperties", "schema", "in", "name", "style", "explode",
                        "content", "application/json", "parameters", "requestBody",
                        "security", "servers", "url", "description", "x"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False,
                    allow_infinity=False), st.sampled_from(
    ["object", "array", "string", "integer", "query", "path", "header", "form",
     "deepObject", "#/components/schemas/A", "#/paths", "https://x.test/a.yaml", "../a",
     "binary", "", "a", "\u202e"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)


def _document(operation: Any, components: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "Fuzz", "version": "1"},
            "servers": [{"url": "https://api.example.com"}],
            "paths": {"/a": {"post": operation}}, "components": {"schemas": components}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES, st.dictionaries(st.sampled_from(["A", "B"]), VALUES, max_size=2))
def test_any_value_shape_gives_files_or_diagnostics(operation: Any, components: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "api.json"
        spec.write_text(json.dumps(_document(operation, components)))
        out = Path(folder) / "out"
        outcome = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out),
                                            take_all=True, **hermetic(out)))
        if outcome.exit_code:
            # Refused by the reader, located in the document; never a generated file that
            # does not compile (that would be the importer's bug, not the document's).
            assert outcome.diagnostics and all(d.line >= 1 for d in outcome.diagnostics)
            assert all(d.code.startswith("openapi-") for d in outcome.diagnostics
                       if d.is_error), [str(d) for d in outcome.diagnostics]
            assert not out.exists() or not any(out.iterdir())
        else:
            assert len(outcome.written) + sum(
                d.code == "openapi-skipped" for d in outcome.diagnostics) == (
                1 if isinstance(operation, dict) else 0)
