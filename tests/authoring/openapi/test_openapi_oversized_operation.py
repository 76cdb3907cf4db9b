"""An operation whose file would be larger than capc reads (Microsoft Graph's OneNote
PATCHes expand past 1 MiB) is skipped with a located warning; the rest of the document is
imported (it used to refuse the whole of Graph's 11,422 operations)."""

from __future__ import annotations

from pathlib import Path

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from tests.authoring.openapi.directory_corpus import directory_document
from tests.authoring.openapi.helpers import hermetic, messages


def test_an_oversized_operation_is_skipped_and_the_rest_imported(tmp_path: Path) -> None:
    document = directory_document("graph")
    out = tmp_path / "capabilities" / "graph"
    outcome = run_import(OpenApiRequest(
        spec=str(document), output_dir=str(out),
        selectors=("PATCH /me/onenote", "GET /me/onenote/notebooks"),
        **hermetic(tmp_path / "capabilities")))
    assert outcome.exit_code == 0, messages(outcome)
    assert [path.name for path in out.glob("*.yaml")] == ["me_onenote_list_notebooks.yaml"]
    skipped = [d for d in outcome.diagnostics if d.code == "openapi-skipped"]
    assert len(skipped) == 1 and skipped[0].severity.value == "warning"
    assert "PATCH /me/onenote not imported: its file would be over 1048576 bytes" \
        in skipped[0].message
    assert skipped[0].line > 1 or skipped[0].col > 1  # located at the operation
    assert "1 tools written, 1 operations skipped" in outcome.lines[-1]
