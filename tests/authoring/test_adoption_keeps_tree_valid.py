"""`capc import`, `capc new`, `capc migrate` and `capc diff --git` on a copy of the shipped
tree: after each, `capc validate --strict` on the whole tree still passes (or the command
refused and changed nothing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

EXPORT = REPO_ROOT / "tests" / "authoring" / "data" / "capabilities_export.json"


def capc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_capc(*args, cwd=cwd)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The shipped tree and [tool.capc] (plugins and strict on), as a user's repository."""
    shutil.copytree(REPO_ROOT / "capabilities", tmp_path / "capabilities")
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def assert_valid(project: Path) -> None:
    result = capc(project, "validate", "--strict")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "no problems found\n"


def test_import_refuses_codes_that_exist_and_writes_nothing(project: Path) -> None:
    before = snapshot(project)
    result = capc(project, "import", str(EXPORT))
    assert result.returncode == 1
    assert ("capabilities/api/get_weather.yaml:7:7: error[import-code-exists]: code "
            "'get_weather' is already defined here; `capc import` would define it again in "
            "capabilities/api/get_weather.yaml (pass --force to replace this definition)"
            ) in result.stderr
    assert snapshot(project) == before
    assert_valid(project)


def test_import_with_force_replaces_single_document_files_only(project: Path) -> None:
    rows = [row for row in json.loads(EXPORT.read_text()) if row["code"] == "base"]
    (project / "rows.json").write_text(json.dumps(rows))
    before = snapshot(project)
    result = capc(project, "import", "rows.json", "--force")
    assert result.returncode == 1  # base lives in core.yaml beside rag and canvas
    assert "is defined in this file with other documents" in result.stderr
    assert snapshot(project) == before


def test_import_with_force_replaces_and_leaves_a_valid_tree(project: Path) -> None:
    rows = [row for row in json.loads(EXPORT.read_text())
            if row["code"] in ("deepwiki", "get_weather")]
    (project / "rows.json").write_text(json.dumps(rows))
    result = capc(project, "import", "rows.json", "--force")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["capabilities/api/get_weather.yaml",
                                          "capabilities/mcp/deepwiki.yaml"]
    text = (project / "capabilities" / "api" / "get_weather.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=../../schemas/capability-v1.json\n"
                           "# Imported by `capc import`")
    assert (project / "schemas" / "capability-v1.json").is_file()  # the modeline resolves
    assert_valid(project)


def test_import_of_new_codes_uses_the_kind_folders(project: Path) -> None:
    rows = [{"name": "Invoices", "code": "get_invoice", "type": "api", "options": {
        "description": "Read an invoice", "url": "https://billing.example.com/v1/invoice"}},
        {"name": "Docs", "code": "docs_server", "type": "mcp", "options": {
            "server_label": "docs", "server_url": "https://mcp.example.com/mcp",
            "require_approval": "never"}}]
    (project / "rows.json").write_text(json.dumps(rows))
    result = capc(project, "import", "rows.json")
    assert result.returncode == 0, result.stderr
    assert (project / "capabilities" / "api" / "get_invoice.yaml").is_file()
    assert (project / "capabilities" / "mcp" / "docs_server.yaml").is_file()
    assert_valid(project)


def test_import_refuses_a_tool_name_clash_with_the_tree(project: Path) -> None:
    rows = [{"name": "Weather 2", "code": "weather_two", "type": "api", "options": {
        "name": "get_weather", "description": "Weather again",
        "url": "https://api.weather.com/v2/current"}}]
    (project / "rows.json").write_text(json.dumps(rows))
    before = snapshot(project)
    result = capc(project, "import", "rows.json")
    assert result.returncode == 1
    assert "get_weather" in result.stderr and "error[" in result.stderr
    assert snapshot(project) == before


def test_new_refuses_a_code_that_exists_anywhere_in_the_tree(project: Path) -> None:
    before = snapshot(project)
    result = capc(project, "new", "mcp", "get_weather")  # an api code, another folder
    assert result.returncode == 1
    assert result.stderr == ("capc: code 'get_weather' already exists "
                             "(capabilities/api/get_weather.yaml:7); capability codes are "
                             "unique: choose another name\n")
    assert snapshot(project) == before
    rag = capc(project, "new", "api", "rag")  # the second document of core.yaml
    assert rag.returncode == 1 and "capabilities/internal/core.yaml:" in rag.stderr


def test_new_writes_a_file_whose_schema_resolves_and_the_tree_stays_valid(
    project: Path
) -> None:
    result = capc(project, "new", "api", "get_invoice")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "capabilities/api/get_invoice.yaml\n"
    written = project / "capabilities" / "api" / "get_invoice.yaml"
    modeline = written.read_text().splitlines()[0]
    schema = modeline.removeprefix("# yaml-language-server: $schema=")
    assert (written.parent / schema).resolve() == (project / "schemas" / "capability-v1.json")
    assert json.loads((project / "schemas" / "capability-v1.json").read_text())["$schema"]
    assert "schemas/capability-v1.json" in result.stderr  # says what else it wrote
    # Its TODO text and placeholder URL fail --strict ([tool.capc] strict here) until
    # filled in; the rest of the tree is untouched and valid.
    unfilled = capc(project, "validate")
    assert unfilled.returncode == 1
    assert {line.split("[", 1)[1].split("]")[0] for line in unfilled.stderr.splitlines()
            if "[" in line} == {"scaffold-placeholder"}
    written.write_text(written.read_text().replace("TODO: ", "")
                       .replace("todo.example.com", "billing.acme.io"))
    assert_valid(project)
    again = capc(project, "new", "mcp", "wiki")
    assert again.returncode == 0 and "schemas/" not in again.stderr  # already up to date


def test_migrate_reports_what_the_full_checks_find(project: Path) -> None:
    legacy = project / "capabilities" / "api" / "legacy.yaml"
    legacy.write_text("code: legacy\nname: Legacy\ntype: api\noptions:\n  description: d\n"
                      "  url: https://api.example.com/x\n  headers:\n"
                      "    X-API-Key: abc123secretvalue\n")
    result = capc(project, "migrate")
    assert result.returncode == 1
    assert "capc migrate: migrated 1 document(s) in 1 file(s)" in result.stderr
    assert ("capabilities/api/legacy.yaml:10:16: error[literal-credential]: header "
            "'X-API-Key' holds a literal credential; write it as a placeholder, e.g. "
            "X-API-Key: ${MY_API_KEY}, and store the value in settings") in result.stderr
    assert "no problems found" not in result.stderr
    legacy.write_text(legacy.read_text().replace("abc123secretvalue", "${LEGACY_KEY}"))
    assert_valid(project)


def test_migrate_of_a_clean_legacy_row_leaves_a_valid_tree(project: Path) -> None:
    (project / "capabilities" / "api" / "legacy.yaml").write_text(
        "code: legacy\nname: Legacy\ntype: api\noptions:\n  description: d\n"
        "  url: https://api.example.com/x\n")
    result = capc(project, "migrate")
    assert result.returncode == 0, result.stderr
    assert result.stderr.endswith("no problems found\n")
    assert_valid(project)


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
                   cwd=cwd, check=True, capture_output=True)


def test_diff_git_treats_a_missing_tree_as_all_added_or_removed(project: Path) -> None:
    tree = project / "capabilities"
    shutil.move(tree, project / "later")
    _git(project, "init", "-q")
    _git(project, "commit", "-q", "--allow-empty", "-m", "no tree yet")
    shutil.move(project / "later", tree)
    _git(project, "add", "capabilities")
    _git(project, "commit", "-q", "-m", "the tree")
    added = capc(project, "diff", "--git", "HEAD~1..HEAD", "--format", "json")
    assert added.returncode == 0, added.stderr
    removed = capc(project, "diff", "--git", "HEAD..HEAD~1", "--format", "json")
    assert removed.returncode == 0, removed.stderr
    compiled = capc(project, "compile", "-o", "m.json")
    assert compiled.returncode == 0, compiled.stderr
    codes = {c["code"] for c in json.loads((project / "m.json").read_text())["capabilities"]}
    assert codes and str(sorted(codes)[0]) in added.stdout
    text = capc(project, "diff", "--git", "HEAD~1..HEAD").stdout
    assert f"capabilities {len(codes)} added" in text
    assert f"capabilities {len(codes)} removed" in capc(project, "diff", "--git",
                                                        "HEAD..HEAD~1").stdout
    unknown = capc(project, "diff", "--git", "nope..HEAD")
    assert unknown.returncode == 2
    assert "'nope' is not a revision of this repository" in unknown.stderr
