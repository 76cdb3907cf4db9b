"""An operation whose file would be larger than capc reads is skipped with a located
warning; the rest of the document is imported (it used to refuse the whole of Microsoft
Graph's 11,422 operations, whose OneNote PATCHes expanded past 1 MiB)."""

from __future__ import annotations

from pathlib import Path

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from compiler.source.safe_read import MAX_SOURCE_BYTES
from tests.authoring.openapi.directory_corpus import directory_document
from tests.authoring.openapi.helpers import document, get, hermetic, imported, messages, write

WORDS = ("the field's meaning told at length, as generated references often do " * 5).strip()


def _oversized_operation() -> dict[str, object]:
    """An operation whose file passes MAX_SOURCE_BYTES, each part within its own limit
    (arguments under the import's bound, a reply schema within the output budget): only
    the whole is too large."""
    fields = {f"field_{index:04d}": {"type": "string", "description": f"{WORDS} ({index})"}
              for index in range(2_300)}
    reply = {f"reply_field_{index:04d}": {"type": "string"} for index in range(1_500)}
    return {"operationId": "sendBig",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": fields}}}},
            "responses": {"200": {"description": "ok", "content": {"application/json": {
                "schema": {"type": "object", "properties": reply}}}}}}


def test_an_oversized_operation_is_skipped_and_the_rest_imported(tmp_path: Path) -> None:
    spec = write(tmp_path, document({
        "/big": {"post": _oversized_operation()},
        "/small": {"get": get("getSmall")}}))
    out = tmp_path / "capabilities" / "api"
    outcome = imported(spec, out)
    assert outcome.exit_code == 0, messages(outcome)
    assert [path.name for path in out.glob("*.yaml")] == ["get_small.yaml"]
    skipped = [d for d in outcome.diagnostics if d.code == "openapi-skipped"]
    assert len(skipped) == 1 and skipped[0].severity.value == "warning"
    assert (f"POST /big not imported: its file would be over {MAX_SOURCE_BYTES} bytes"
            in skipped[0].message)
    assert skipped[0].line > 1  # located at the operation
    assert "1 tools written, 1 operations skipped" in outcome.lines[-1]


def test_graphs_onenote_patch_now_fits(tmp_path: Path) -> None:
    """Within the output-schema budget (2,000 nodes), Graph's OneNote PATCH is a file
    under the limit, and is imported with the rest."""
    out = tmp_path / "capabilities" / "graph"
    outcome = run_import(OpenApiRequest(
        spec=str(directory_document("graph")), output_dir=str(out),
        selectors=("PATCH /me/onenote", "GET /me/onenote/notebooks"),
        **hermetic(tmp_path / "capabilities")))
    assert outcome.exit_code == 0, messages(outcome)
    written = sorted(path.name for path in out.glob("*.yaml"))
    assert written == ["me_onenote_list_notebooks.yaml", "me_update_onenote.yaml"]
    assert all(path.stat().st_size <= MAX_SOURCE_BYTES for path in out.glob("*.yaml"))
