"""``capc import``: a realistic export of the reference's capabilities table."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from compiler.authoring.importer import import_rows
from compiler.build import build
from tests.support.capc import run_capc

DATA = Path(__file__).parent / "data" / "capabilities_export.json"
GOLDEN = Path(__file__).parent / "golden" / "import"
REFERENCE_CODES = {
    "base", "rag", "base_rag", "obviously_manage", "crm", "deepwiki", "ha_remote",
    "get_weather", "send_sms", "get_chat_messages", "post_message", "send_sms_form",
    "attach_file",
}


def test_every_row_becomes_its_golden_file() -> None:
    result = import_rows(DATA.read_text(), str(DATA))
    assert result.diagnostics == ()
    produced = {imported.filename: imported.text for imported in result.files}
    expected = {path.name: path.read_text() for path in GOLDEN.glob("*.yaml")}
    assert produced == expected
    assert {name.removesuffix(".yaml") for name in produced} == REFERENCE_CODES


def test_import_is_deterministic_and_independent_of_row_order() -> None:
    rows = json.loads(DATA.read_text())
    forward = import_rows(json.dumps(rows), "rows.json").files
    backward = import_rows(json.dumps(rows[::-1]), "rows.json").files
    assert sorted(forward, key=lambda f: f.filename) == sorted(backward, key=lambda f: f.filename)


def test_options_text_and_comma_codes_are_upgraded() -> None:
    files = {f.filename: yaml.safe_load(f.text) for f in import_rows(DATA.read_text(),
                                                                      "x.json").files}
    assert files["base_rag.yaml"]["options"] == {"codes": ["base", "rag"]}
    assert files["base_rag.yaml"]["is_default"] is False and files["base_rag.yaml"]["ordering"] == 3
    assert files["send_sms.yaml"]["options"]["body"]["to"]["required"] is True
    assert files["deepwiki.yaml"]["options"]["server_url"] == "https://mcp.deepwiki.com/mcp"
    for document in files.values():
        assert list(document)[:2] == ["apiVersion", "kind"]
        assert not {"id", "group_id", "created_at", "updated_at"} & document.keys()


def test_imported_tree_compiles_cleanly(tmp_path: Path, in_dir) -> None:
    in_dir(tmp_path)
    result = run_capc("import", str(DATA), "-o", "capabilities", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 13
    compiled = build(["capabilities"])
    assert compiled.manifest is not None, compiled.diagnostics
    assert not [d for d in compiled.diagnostics if d.is_error]
    assert {c["code"] for c in compiled.manifest["capabilities"]} == REFERENCE_CODES


def test_existing_files_are_never_overwritten_without_force(tmp_path: Path, in_dir) -> None:
    in_dir(tmp_path)
    (tmp_path / "out" / "internal").mkdir(parents=True)
    (tmp_path / "out" / "internal" / "crm.yaml").write_text("# mine\n")
    refused = run_capc("import", str(DATA), "-o", "out", cwd=tmp_path)
    assert refused.returncode == 1
    assert "out/internal/crm.yaml:1:1: error[import-exists]" in refused.stderr
    assert [p.name for p in (tmp_path / "out").rglob("*.yaml")] == ["crm.yaml"]
    assert (tmp_path / "out" / "internal" / "crm.yaml").read_text() == "# mine\n"
    forced = run_capc("import", str(DATA), "-o", "out", "--force", cwd=tmp_path)
    assert forced.returncode == 0
    modeline, _, text = (tmp_path / "out" / "internal" / "crm.yaml").read_text().partition("\n")
    assert modeline == "# yaml-language-server: $schema=../../schemas/capability-v1.json"
    assert text == (GOLDEN / "crm.yaml").read_text()


def test_schema_line_points_at_the_trees_schema(tmp_path: Path, in_dir, repo_root: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "capability-v1.json").write_text("{}")
    in_dir(tmp_path)
    result = run_capc("import", str(DATA), "-o", "capabilities/imported", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rag = tmp_path / "capabilities" / "imported" / "internal" / "rag.yaml"
    first = rag.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../../schemas/capability-v1.json"


def test_bad_rows_are_located_and_nothing_is_written(tmp_path: Path, in_dir) -> None:
    rows = [
        {"id": 1, "name": "A", "code": "a", "type": "internal"},
        {"id": 2, "name": "No type", "code": "b"},
        {"id": 3, "name": "Dup", "code": "a", "type": "internal"},
        {"id": 4, "name": "Bad", "code": "c", "type": "mcp", "options": "{oops"},
        {"id": 5, "name": "Odd", "code": "d", "type": "internal", "tenant": "x"},
    ]
    export = tmp_path / "rows.json"
    export.write_text(json.dumps(rows, indent=1))
    in_dir(tmp_path)
    result = run_capc("import", "rows.json", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1
    errors = result.stderr
    assert "rows.json:8:2: error[import]: row 2 (id 2) lacks type" in errors
    assert "error[import-duplicate-code]: row 3 (id 3): code 'a' is already used by row 1" in errors
    assert "error[legacy-row]: row 4 (id 4): options is a string but not valid JSON" in errors
    assert ("warning[import-unknown-column]: row 5 (id 5): dropped columns capc does not "
            "know: tenant") in errors
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path, in_dir) -> None:
    (tmp_path / "rows.json").write_text('{"rows": 3}')
    in_dir(tmp_path)
    result = run_capc("import", "rows.json", cwd=tmp_path)
    assert result.returncode == 1
    assert "error[import]: not a capabilities export: expected a JSON list" in result.stderr


def _import(tmp_path: Path, in_dir, rows: object) -> tuple[int, str]:
    (tmp_path / "rows.json").write_text(json.dumps(rows, indent=1))
    in_dir(tmp_path)
    result = run_capc("import", "rows.json", "-o", "out", cwd=tmp_path)
    return result.returncode, result.stderr


def test_codes_that_are_not_identifiers_never_name_a_file(tmp_path: Path, in_dir) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    rows = [
        {"name": "Evil", "code": "../../evil", "type": "internal"},
        {"name": "Abs", "code": str(tmp_path / "ABS"), "type": "internal"},
        {"name": "Int", "code": 5, "type": "internal"},
        {"name": "Fine", "code": "fine", "type": "internal"},
    ]
    code, errors = _import(work, in_dir, rows)
    assert code == 1
    assert "rows.json:2:2: error[import-invalid-code]: row 1: code '../../evil' is" in errors
    assert "rows.json:7:2: error[import-invalid-code]: row 2: code '/" in errors
    assert "rows.json:12:2: error[import-invalid-code]: row 3: code 5 is invalid" in errors
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "rows.json"]


def test_rows_the_compiler_rejects_are_located_and_nothing_is_written(
    tmp_path: Path, in_dir
) -> None:
    weather = yaml.safe_load((GOLDEN / "get_weather.yaml").read_text())
    del weather["apiVersion"], weather["kind"]
    good_url = weather["options"]["url"]
    weather["options"]["url"] = "https://169.254.169.254/latest"
    rows = [
        {"name": "Fine", "code": "fine", "type": "internal"},
        {"name": "Server", "code": "server", "type": "mcp", "options": None},
        weather,
    ]
    code, errors = _import(tmp_path, in_dir, rows)
    assert code == 1
    assert "rows.json:7:2: error[schema-required]: row 2: " in errors
    assert "(in the generated server.yaml, line" in errors
    assert "error[url-forbidden-address]: row 3: requests may not go to" in errors
    assert "(in the generated get_weather.yaml, line" in errors
    assert not (tmp_path / "out").exists()
    # The same rows, fixed, import and compile.
    weather["options"]["url"] = good_url
    code, errors = _import(tmp_path, in_dir, [rows[0], weather])
    assert code == 0, errors
    assert build(["out"]).manifest is not None


def test_a_deeply_nested_export_is_a_located_error(tmp_path: Path, in_dir) -> None:
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    in_dir(tmp_path)
    result = run_capc("import", "deep.json", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "deep.json:1:1: error[import]: the export is nested too deeply" in result.stderr
    assert "internal error" not in result.stdout + result.stderr
    nested: list[object] = []
    for _ in range(900):  # the JSON parser copes; PyYAML's composer and dumper do not
        nested = [nested]
    code, errors = _import(tmp_path, in_dir, [{"name": "D", "code": "d", "type": "internal",
                                               "options": {"x": nested}}])
    assert code == 1
    assert "error[import]: row 1: the export is nested too deeply" in errors
    assert not (tmp_path / "out").exists()


def test_write_refuses_a_file_name_that_leaves_the_folder(tmp_path: Path) -> None:
    from compiler.authoring.importer import ImportedFile, ImportResult, write_imported

    result = ImportResult((ImportedFile("../evil.yaml", "x: 1\n"),), ())
    written, problems = write_imported(result, str(tmp_path / "out"))
    assert written == [] and [p.code for p in problems] == ["import-path"]
    assert not (tmp_path / "evil.yaml").exists()


def test_private_hosts_import_only_with_the_flag(tmp_path: Path, in_dir) -> None:
    in_dir(tmp_path)
    rows = tmp_path / "rows.json"
    rows.write_text('[{"name": "Local", "code": "local", "type": "api", "options": '
                    '{"description": "d", "url": "http://127.0.0.1:8080/x"}}]')
    refused = run_capc("import", str(rows), "-o", "out", cwd=tmp_path)
    assert refused.returncode == 1 and "url-private-address" in refused.stderr
    assert not (tmp_path / "out").exists()
    allowed = run_capc("import", str(rows), "-o", "out",
                                       "--allow-private-networks", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "url: http://127.0.0.1:8080/x" in (tmp_path / "out" / "api" / "local.yaml").read_text()
