"""A re-import never silently replaces a file another document generated (issue 30, item
5): each generated file's header names its document by its path in the project; another
document's files, and hand-written ones, are refused before anything is written."""

from __future__ import annotations

from pathlib import Path

from compiler.authoring.openapi.existing import document_record, recorded_document
from tests.authoring.openapi.helpers import document, get, imported, messages, write
from tests.support.capc import run_capc


def _two_documents(tmp_path: Path) -> tuple[Path, Path]:
    first = write(tmp_path / "specs", document({"/things": {"get": get("listThings")}}),
                  "first.yaml")
    second = write(tmp_path / "specs", document({"/things": {"get": get("listThings")}},
                                                servers=[{"url": "https://two.example.com"}]),
                   "second.yaml")
    return first, second


def test_a_file_another_document_generated_is_refused_and_left_as_it_was(
        tmp_path: Path) -> None:
    first, second = _two_documents(tmp_path)
    out = tmp_path / "out"
    assert imported(first, out).exit_code == 0
    before = (out / "list_things.yaml").read_bytes()
    refused = imported(second, out)
    assert refused.exit_code == 1 and not refused.written
    assert (out / "list_things.yaml").read_bytes() == before
    [problem] = refused.diagnostics
    assert problem.code == "openapi-other-document"
    assert (problem.path, problem.line) == ((out / "list_things.yaml").as_posix(), 3)
    said = messages(refused)
    assert "generated from ../specs/first.yaml, not from ../specs/second.yaml" in said
    assert "-o DIR" in said and "--replace" in said


def test_replace_says_it_and_the_file_then_names_the_new_document(tmp_path: Path) -> None:
    first, second = _two_documents(tmp_path)
    out = tmp_path / "out"
    imported(first, out)
    replaced = imported(second, out, force=True)
    assert replaced.exit_code == 0, messages(replaced)
    text = (out / "list_things.yaml").read_text()
    assert recorded_document(text).record == "../specs/second.yaml"
    assert "two.example.com" in text
    assert imported(second, out).exit_code == 0  # its own document now: regenerated


def test_a_hand_written_file_in_the_way_names_the_document_and_the_way_out(
        tmp_path: Path) -> None:
    first, _ = _two_documents(tmp_path)
    out = tmp_path / "out"
    (out).mkdir()
    (out / "list_things.yaml").write_text("# mine\n")
    refused = imported(first, out)
    assert refused.exit_code == 1 and (out / "list_things.yaml").read_text() == "# mine\n"
    assert [d.code for d in refused.diagnostics] == ["import-exists"]
    assert "importing ../specs/first.yaml would replace it" in messages(refused)


def test_an_older_file_naming_the_document_by_its_name_only_is_regenerated(
        tmp_path: Path) -> None:
    first, _ = _two_documents(tmp_path)
    out = tmp_path / "out"
    imported(first, out)
    target = out / "list_things.yaml"
    older = target.read_text().replace("from ../specs/first.yaml,", "from first.yaml,")
    target.write_text(older)
    again = imported(first, out)
    assert again.exit_code == 0, messages(again)
    assert any("an older import" in line for line in again.lines), again.lines
    assert recorded_document(target.read_text()).record == "../specs/first.yaml"
    target.write_text(older.replace("from first.yaml,", "from other.yaml,"))
    assert [d.code for d in imported(first, out).diagnostics] == ["openapi-other-document"]


def test_the_record_is_the_path_in_the_project_never_an_absolute_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.capc]\n")
    write(tmp_path / "openapi", document({"/things": {"get": get("listThings")}}), "api.yaml")
    run = run_capc("import", "openapi", "openapi/api.yaml", "--all", "-o", "capabilities/api",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "capabilities" / "api" / "list_things.yaml").read_text()
    assert "from openapi/api.yaml, operation GET /things." in text
    assert str(tmp_path) not in text
    assert document_record(str(tmp_path / "api.yaml"), "out", tmp_path) == "./api.yaml"


def test_a_long_record_folds_and_still_reads_back(tmp_path: Path) -> None:
    folder = tmp_path / ("d" * 60) / ("e" * 60)
    spec = write(folder, document({"/things": {"get": get("listThings")}}), "api.yaml")
    out = tmp_path / "out"
    assert imported(spec, out).exit_code == 0
    text = (out / "list_things.yaml").read_text()
    assert all(len(line) <= 100 or " " not in line.removeprefix("# ")
               for line in text.splitlines())
    assert imported(spec, out).exit_code == 0  # the folded record is still its own
