"""capc run from a subdirectory finds the project's pyproject.toml upward (as ruff and
pytest do), and reads [tool.capc]'s paths relative to the directory holding it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compiler.errors import UsageError
from compiler.project import find_project_root, read_project_settings
from tests.support.capc import run_capc

CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: N
type: api
options:
  description: d
  url: https://api.example.com/x
"""


def _project(root: Path, table: str = 'roots = ["caps"]\noutput = "out/m.json"\n') -> Path:
    (root / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.capc]\n{table}")
    (root / "caps").mkdir()
    (root / "caps" / "a.yaml").write_text(CAPABILITY.format(code="a"))
    return root


def test_compile_from_a_subdirectory_uses_the_project_roots_and_output(tmp_path: Path) -> None:
    root = _project(tmp_path)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    result = run_capc("compile", cwd=deep)
    assert result.returncode == 0, result.stderr
    assert (root / "out" / "m.json").is_file()
    assert not (deep / "out").exists()
    assert run_capc("compile", "--check", cwd=deep).returncode == 0
    assert run_capc("compile", "--check", cwd=root).returncode == 0


def test_from_the_root_the_paths_read_exactly_as_written(tmp_path: Path) -> None:
    settings = read_project_settings(_project(tmp_path))
    assert settings.roots == ("caps",) and settings.output == "out/m.json"
    assert settings.lock == "capc.lock"


def test_from_a_subdirectory_every_path_setting_is_relative_to_the_root(tmp_path: Path) -> None:
    root = _project(tmp_path, 'roots = ["caps"]\nvars = ["v.yaml"]\noutput = "o.json"\n')
    (root / "sub").mkdir()
    settings = read_project_settings(root / "sub")
    assert settings.roots == ("../caps",) and settings.variables == ("../v.yaml",)
    assert settings.output == "../o.json" and settings.lock == "../capc.lock"
    assert settings.root == root.resolve()


def test_a_nearer_pyproject_without_tool_capc_does_not_hide_the_project(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    package = root / "packages" / "lib"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text("[project]\nname = 'lib'\n")
    assert find_project_root(package / ".") == root.resolve()


def test_without_any_tool_capc_the_nearest_pyproject_is_the_root(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_project_root(tmp_path / "a" / "b") == tmp_path.resolve()
    assert read_project_settings(tmp_path / "a" / "b").output == "../../build/manifest.json"


def test_the_search_stops_at_the_git_repository_root(tmp_path: Path) -> None:
    _project(tmp_path)
    repository = tmp_path / "vendored"
    (repository / "inner").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    assert find_project_root(repository / "inner") == (repository / "inner").resolve()
    assert read_project_settings(repository / "inner").roots == ("capabilities",)


def test_a_broken_table_found_upward_is_still_reported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.capc]\nroots = 3\n")
    (tmp_path / "sub").mkdir()
    with pytest.raises(UsageError, match="roots must be a list"):
        read_project_settings(tmp_path / "sub")
