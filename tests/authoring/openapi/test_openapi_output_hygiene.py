"""Output hygiene of the import (issue 30, item 5): what the document wrote never
drives the terminal, never names a Windows device, and ``--format json`` is one
document on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from compiler.authoring.openapi.naming import folder_name
from tests.authoring.openapi.helpers import document, get, imported, write
from tests.support.capc import run_capc

HOSTILE = ["\x1b[2J", "\u202e", "\x9b31m", "\u2066", "\r", "\x85"]


@pytest.mark.parametrize("control", HOSTILE)
def test_no_control_character_reaches_the_summary_or_the_check_report(
    tmp_path: Path, control: str
) -> None:
    # The folder's name reaches every summary and report line; the document's own names
    # with such characters are refused before anything is printed.
    spec = write(tmp_path, document({"/a": {"get": get("listThings")}}), "api.json")
    out = tmp_path / f"out{control}dir"
    written = imported(spec, out)
    assert written.exit_code == 0 and written.lines
    assert not any(control in line for line in written.lines), written.lines
    write(tmp_path, document({"/a": {"get": get("listThings")}}, servers=[
        {"url": "https://other.example.com"}]), "api.json")
    for output_format in ("text", "json"):
        report = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                           output_format=output_format))
        assert report.exit_code == 1 and report.lines
        assert not any(control in line for line in report.lines), report.lines


@pytest.mark.parametrize("name", ["con", "NUL", "Com1", "lpt9", "aux", "prn"])
def test_no_generated_file_or_folder_is_a_windows_device(tmp_path: Path, name: str) -> None:
    spec = write(tmp_path, document({"/a": {"get": get(name)}}, info={
        "title": name, "version": "1"}), "api.json")
    out = tmp_path / "out"
    assert imported(spec, out).exit_code == 0
    (written,) = [path.name for path in out.iterdir()]
    assert written == f"{name.lower()}_op.yaml"
    assert folder_name(name) == f"{name.lower()}_op"


def test_format_json_prints_exactly_one_json_document(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("a")}}, openapi="3.0.3",
                                    **{"x-bad": None}), "api.yaml")
    # A warning (the document is not valid OpenAPI) and the listing: stdout is one document.
    spec.write_text(spec.read_text() + "components: {schemas: {A: 3}}\n")
    listed = run_capc("import", "openapi", str(spec), "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert isinstance(json.loads(listed.stdout), list)


@pytest.mark.parametrize(("written", "kept"), [("/^[a-z]+$/", "^[a-z]+$"),
                                                ("/^[a-z]+$/i", None), ("^a/b$", "^a/b$")])
def test_a_javascript_regex_literal_is_the_plain_regex_or_dropped(
    tmp_path: Path, written: str, kept: str | None
) -> None:
    from tests.authoring.openapi.helpers import mapped

    spec = write(tmp_path, document({"/a": {"get": get("a", parameters=[
        {"name": "q", "in": "query", "schema": {"type": "string", "pattern": written}}])}}))
    found = mapped(spec)["a"]
    assert found["data"]["options"]["params"]["q"].get("pattern") == kept
    if kept is None:
        assert any("flags" in note for note in found["notes"])
