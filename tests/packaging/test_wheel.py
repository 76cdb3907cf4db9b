"""The package as users get it: a wheel installed into a fresh venv outside the repo."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_wheel_installs_and_compiles_outside_the_repo(tmp_path: Path) -> None:
    # Build from a clean copy: setuptools writes build/ and *.egg-info next to the sources.
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "bench"))
    dist = tmp_path / "dist"
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "-w", dist, source)
    assert built.returncode == 0, built.stderr
    wheel = next(dist.glob("capc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "compiler/schema/json/capability-v1.json" in names
    assert "compiler/schema/json/tool-override-v1.json" in names
    assert not any(name.startswith(("tests/", "capabilities/")) for name in names)

    venv = tmp_path / "venv"
    # The fresh venv sees this interpreter's site-packages read-only for the dependencies
    # (no network in tests); capc itself comes only from the wheel.
    assert run(sys.executable, "-m", "venv", "--system-site-packages", venv).returncode == 0
    python = venv / "bin" / "python"
    installed = run(python, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--force-reinstall", wheel)
    assert installed.returncode == 0, installed.stderr

    project = tmp_path / "project"
    shutil.copytree(REPO / "capabilities", project / "capabilities")
    located = run(python, "-c", "import compiler, sys; print(compiler.__file__)", cwd=project)
    assert str(venv) in located.stdout, located.stdout + located.stderr
    compiled = run(venv / "bin" / "capc", "compile", cwd=project)
    assert compiled.returncode == 0, compiled.stderr
    manifest = json.loads((project / "build" / "manifest.json").read_text())
    assert manifest["manifest_version"] == 1
    schema = run(venv / "bin" / "capc", "schema", "ToolOverride", cwd=project)
    assert json.loads(schema.stdout)["title"] == "capc/v1 ToolOverride"
