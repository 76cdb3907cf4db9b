"""docs/plugins.md, run top to bottom: the package it describes is discovered, listed by
``capc plugins``, checked by ``capc compile --plugins``, and given the host's context.

The package is "installed" the way pip lays one out for discovery: a dist-info folder
with its entry points (read from the page's own pyproject.toml) on the path, next to the
page's source files, so the test never changes the venv.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.doc_blocks import FILE_LINE, code_blocks, run_blocks
from tests.support.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "plugins.md"


def install(project: dict[str, Any], site: Path) -> None:
    """Lay out ``project``'s distribution metadata as an install does."""
    name, version = project["name"], project["version"]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = []
    for group, points in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{point} = {target}" for point, target in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (pyproject,) = [block.text for block in code_blocks(PAGE)
                    if (found := FILE_LINE.match(block.text)) and found[1] == "pyproject.toml"]
    install(tomllib.loads(pyproject)["project"], tmp_path / "site")
    paths = [str(tmp_path / "site"), str(tmp_path / "src")]
    for path in reversed(paths):
        monkeypatch.syspath_prepend(path)
    monkeypatch.setenv("PYTHONPATH", ":".join(paths))
    importlib.invalidate_caches()
    yield tmp_path
    for module in [name for name in sys.modules if name.startswith("weather_plugin")]:
        del sys.modules[module]


async def test_the_plugins_page_runs_as_written(installed: Path) -> None:
    namespace: dict[str, Any] = {}
    printed = await run_blocks(PAGE, installed, namespace)
    assert "weather-plugin 0.1.0" in printed
    assert "code weather_tools — Weather tools: Forecasts for any city" in printed
    assert "forecast(city: string)" in printed
    assert printed.rstrip().endswith("Oslo: sunny, 21 degrees F")
    manifest = namespace["manifest"]
    assert manifest.data.plugins  # --plugins recorded what was registered
    await manifest.aclose()


def test_every_block_of_the_page_is_run_or_says_why_not() -> None:
    blocks = code_blocks(PAGE)
    assert {block.lang for block in blocks} == {"toml", "python", "sh", "yaml"}
    assert [block.skip for block in blocks if block.skip is not None] == [
        "the test installs the package by placing its dist-info on the path, not with pip"]
