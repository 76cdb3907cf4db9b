"""Shared by the adoption tests: capc as a wheel, and CI runners that install it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.fresh_checkout import copy_tracked


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """capc as a release ships it: a wheel built from a clean copy of this checkout."""
    work = tmp_path_factory.mktemp("wheel")
    source = copy_tracked(work / "source")  # what a clone holds, not the working directory
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(work / "dist"), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    return next((work / "dist").glob("capc-*.whl"))


@pytest.fixture(scope="session")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CI runner's Python: a fresh venv with pip and no capc; capc's dependencies come
    read-only from this test run (no index), capc itself only from what a step installs."""
    venv = tmp_path_factory.mktemp("runner") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "runner_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv
