"""Fixtures: real plugin distributions (the installed test plugin, its next release in a
temporary target directory, and small ad-hoc distributions that misbehave on purpose)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.support import capc as harness
from tests.support.catalogue import PLUGIN_V2

pytest.importorskip("capc_test_plugin", reason="make installs tests/plugins/* into the venv")


@pytest.fixture(scope="session")
def plugin_v2_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """capc-test-plugin 0.2.0 installed by pip into a target directory (put it on PYTHONPATH).

    Built from a copy, so the build leaves nothing behind in tests/plugins.
    """
    work = tmp_path_factory.mktemp("plugin-v2")
    source = work / "source"
    shutil.copytree(PLUGIN_V2, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(target), str(source)],
        check=True, capture_output=True, timeout=120)
    assert (target / "capc_test_plugin-0.2.0.dist-info").is_dir()
    return target


@pytest.fixture
def make_distribution(tmp_path: Path) -> Callable[[str, dict[str, str]], Path]:
    """Write a real (unpacked) distribution: dist-info with entry points, plus modules.

    ``entry_points`` maps entry-point names to module source; each module gets a
    ``register`` target. Returns the folder to put on PYTHONPATH.
    """

    def make(name: str, entry_points: dict[str, str]) -> Path:
        site = tmp_path / f"site-{name}"
        info = site / f"{name}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        lines = ["[primethink.tools]"]
        for point, source in entry_points.items():
            module = f"{name}_{point}"
            (site / f"{module}.py").write_text(source)
            lines.append(f"{point} = {module}:register")
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        return site

    return make


@pytest.fixture
def run_capc(in_dir: Callable[[Path], None]) -> Iterator[Callable[..., CompletedProcess[str]]]:
    """Run capc in-process in a folder with extra environment (plugin discovery inherits it)."""

    def run(folder: Path, *args: str, pythonpath: Path | None = None) -> CompletedProcess[str]:
        in_dir(folder)
        env = {"CAPC_NO_CACHE": "1"}
        if pythonpath is not None:
            env["PYTHONPATH"] = str(pythonpath)
        return harness.run_capc(*args, cwd=folder, extra_env=env)

    yield run
