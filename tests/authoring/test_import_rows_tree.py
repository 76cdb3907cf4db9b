"""``capc import ROWS.json`` checks the tree it would leave with the compile ``capc compile``
runs (``compiler.tree_compile``): a templated capability of the same code is seen, with the
project's template variables, and the verdict is the next compile's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.capc import run_capc

TEMPLATE = """apiVersion: capc/v1
kind: Capability
code: weather
name: "{{ weather_title }}"
type: api
options:
  name: weather
  description: The weather
  method: GET
  url: https://weather.example.com/v1/now
"""

ROW = {"id": 1, "name": "Weather", "code": "weather", "type": "api",
       "description": "Weather of a city",
       "options": {"name": "weather", "description": "Weather", "method": "GET",
                   "url": "https://weather.example.com/v1/today"}}


def _project(root: Path, template_code: str) -> Path:
    (root / "capabilities").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.capc]\nvars = ["vars.yaml"]\n')
    (root / "vars.yaml").write_text("weather_title: Weather\n")
    (root / "capabilities" / f"{template_code}.yaml.j2").write_text(
        TEMPLATE.replace("code: weather", f"code: {template_code}")
        .replace("name: weather", f"name: {template_code}"))
    (root / "rows.json").write_text(json.dumps([ROW]))
    return root


def test_a_templated_capability_of_the_same_code_refuses_the_import(tmp_path: Path) -> None:
    root = _project(tmp_path, "weather")
    done = run_capc("import", "rows.json", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error[import-code-exists]" in done.stderr
    assert "capabilities/weather.yaml.j2" in done.stderr
    assert not (root / "capabilities" / "api").exists()
    assert run_capc("compile", cwd=root).returncode == 0


def test_another_templated_code_imports_and_the_tree_compiles(tmp_path: Path) -> None:
    root = _project(tmp_path, "forecast")
    done = run_capc("import", "rows.json", cwd=root)
    assert done.returncode == 0, done.stderr
    assert (root / "capabilities" / "api" / "weather.yaml").is_file()
    compiled = run_capc("compile", cwd=root)
    assert compiled.returncode == 0, compiled.stderr
