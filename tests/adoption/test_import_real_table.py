"""``capc import`` of a real company table: soft-deleted rows, tenants, partial imports,
literal secrets, and the same compile options ``capc compile`` uses (SPEC §14)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.adoption.company_export import SECRETS, leaked, rows, write_export
from tests.support.capc import run_capc

NETWORKS = '[tool.capc]\nallowed_networks = ["10.20.0.0/16"]\n'


def project(root: Path, settings: str = NETWORKS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f"[project]\nname = 'acme-agents'\n\n{settings}")
    return root


def written(root: Path, folder: str = "capabilities") -> list[str]:
    base = root / folder
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*.yaml")) \
        if base.exists() else []


def test_soft_deleted_rows_are_left_out_and_listed(tmp_path: Path) -> None:
    root = project(tmp_path / "acme")
    export = write_export(root)
    done = run_capc("import", str(export), "--group", "9", cwd=root)
    assert done.returncode == 0, done.stderr
    assert written(root) == ["api/get_weather.yaml", "api/inventory.yaml", "mcp/wiki.yaml"]
    assert "row 6 (id 6): is_active is false" in done.stderr
    assert "row 7 (id 7): enabled is false" in done.stderr
    assert "row 3 (id 3): deleted_at is set" in done.stderr  # listed though of group 7
    for path in (root / "capabilities").rglob("*.yaml"):
        assert not {"is_active", "deleted_at", "enabled"} & yaml.safe_load(path.read_text()).keys()


def test_several_groups_need_a_choice_and_nothing_is_written(tmp_path: Path) -> None:
    root = project(tmp_path / "acme")
    done = run_capc("import", str(write_export(root)), cwd=root)
    assert done.returncode == 1
    assert "2 groups (7, 9)" in done.stderr and "--group ID" in done.stderr
    assert "import-duplicate-code" not in done.stderr
    assert written(root) == []
    unknown = run_capc("import", str(write_export(root)), "--group", "8", cwd=root)
    assert unknown.returncode == 1 and "the groups are: 7, 9" in unknown.stderr


def test_one_tree_per_group_each_compiling_to_its_own_manifest(tmp_path: Path) -> None:
    root = project(tmp_path / "acme")
    done = run_capc("import", str(write_export(root)), "--by-group", "-o", "tenants", cwd=root)
    assert done.returncode == 0, done.stderr
    assert written(root, "tenants/7") == ["api/get_weather.yaml", "api/inventory.yaml"]
    assert written(root, "tenants/9") == ["api/get_weather.yaml", "api/inventory.yaml",
                                          "mcp/wiki.yaml"]
    digests = set()
    for group in ("7", "9"):
        assert f"capc compile tenants/{group} -o build/{group}/manifest.json" in done.stderr
        built = run_capc("compile", f"tenants/{group}", "-o", f"build/{group}/manifest.json",
                         cwd=root)
        assert built.returncode == 0, built.stderr
        manifest = json.loads((root / "build" / group / "manifest.json").read_text())
        digests.add(manifest["digest"])
    assert len(digests) == 2


def test_skip_invalid_writes_the_valid_rows_and_names_the_others(tmp_path: Path) -> None:
    data = rows()
    data[1]["options"] = json.dumps({"description": "x", "url": "https://169.254.169.254/x"})
    data.append({"id": 40, "group_id": 7, "name": "No type", "code": "no_type"})
    root = project(tmp_path / "acme")
    export = write_export(root, data)
    refused = run_capc("import", str(export), "--group", "7", cwd=root)
    assert refused.returncode == 1 and written(root) == []
    done = run_capc("import", str(export), "--group", "7", "--skip-invalid", cwd=root)
    assert done.returncode == 1
    assert written(root) == ["api/get_weather.yaml"]
    assert "row 2 (id 2): requests may not go to '169.254.169.254'" in done.stderr
    assert "row 9 (id 40) lacks type" in done.stderr
    assert "left out 2 problem row(s)" in done.stderr
    assert run_capc("compile", cwd=root).returncode == 0


def test_literal_secrets_become_settings_and_are_never_written(tmp_path: Path) -> None:
    root = project(tmp_path / "acme")
    export = write_export(root)
    done = run_capc("import", str(export), "--by-group", cwd=root)
    assert done.returncode == 0, done.stderr
    assert leaked(root, done.stdout, done.stderr) == []
    for setting in ("GET_WEATHER_APPID", "INVENTORY_AUTHORIZATION", "GET_WEATHER_X_API_KEY"):
        assert f"  {setting}  (" in done.stderr
    weather = yaml.safe_load((root / "capabilities/7/api/get_weather.yaml").read_text())
    assert weather["options"]["url"].endswith("weather?appid=${GET_WEATHER_APPID}")
    inventory = yaml.safe_load((root / "capabilities/7/api/inventory.yaml").read_text())
    assert inventory["options"]["headers"] == {
        "Authorization": "Bearer ${INVENTORY_AUTHORIZATION}"}
    # The failure paths print nothing of them either.
    again = run_capc("import", str(export), "--by-group", "--format", "json", cwd=root)
    assert again.returncode == 1
    assert leaked(root, again.stdout, again.stderr) == []
    assert all(secret in export.read_text() for secret in SECRETS)  # they were there


def test_the_import_check_uses_the_compile_options_of_the_project(tmp_path: Path) -> None:
    # Without allowed_networks, the 10.20.x.x API of the table is refused.
    bare = project(tmp_path / "bare", "")
    refused = run_capc("import", str(write_export(bare)), "--group", "9", cwd=bare)
    assert refused.returncode == 1 and "10.20.9.9" in refused.stderr
    # Strict: a warning compile --strict fails on stops the import too.
    data = [row for row in rows() if row["group_id"] == 7 and row["code"] == "inventory"]
    data[0]["options"] = json.dumps({"description": "x", "url": "http://10.20.4.2/items",
                                     "headers": {"Authorization": "Bearer ${TOKEN}"}})
    strict = project(tmp_path / "strict", NETWORKS + "strict = true\n")
    stopped = run_capc("import", str(write_export(strict, data)), cwd=strict)
    assert stopped.returncode == 1 and "plain-http-secret" in stopped.stderr
    assert written(strict) == []
    # Whatever an import writes, the project's compile accepts.
    fine = project(tmp_path / "fine", NETWORKS + "strict = true\n")
    assert run_capc("import", str(write_export(fine)), "--group", "7", cwd=fine).returncode == 0
    assert run_capc("compile", cwd=fine).returncode == 0


@pytest.mark.parametrize("config", ["shipped", "default"])
def test_generated_files_pass_yamllint(tmp_path: Path, config: str, repo_root: Path) -> None:
    pytest.importorskip("yamllint")
    root = project(tmp_path / "acme")
    assert run_capc("import", str(write_export(root)), "--by-group", cwd=root).returncode == 0
    # The shipped config with --strict (as tests/cli does); yamllint's defaults as an
    # adopter runs them (its default document-start rule is a warning).
    arguments = (["--strict", "-c", str(repo_root / ".yamllint")] if config == "shipped"
                 else ["-d", "default"])
    lint = subprocess.run([sys.executable, "-m", "yamllint", "-f", "parsable",
                           *arguments, "capabilities"], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout
