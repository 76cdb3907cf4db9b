"""capc serve judged by the official MCP conformance runner, every applicable scenario.

The fixture plugin (tests/plugins/capc-conformance-plugin) is installed into a target
folder for this test only; its capability tree is compiled with it, and the real
``capc serve`` command serves the ``mcp-conformance`` profile on 127.0.0.1. Each scenario
that applies to a tools-only server (tests/support/conformance.py says which, and why the
others do not) runs for both spec versions' requirement sets and must pass. The
per-scenario results are written to build/conformance/capc-serve.json and .md, which
docs/serve-auth.md quotes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.conformance import (
    APPLICABLE,
    SPEC_VERSIONS,
    ScenarioResult,
    run_scenarios,
    write_results,
)
from tests.support.paths import REPO_ROOT
from tests.support.served_process import free_port, serving

PLUGIN = REPO_ROOT / "tests" / "plugins" / "capc-conformance-plugin"
RESULTS = REPO_ROOT / "build" / "conformance" / "capc-serve.json"
CAPC = Path(sys.executable).parent / "capc"
DOCS = REPO_ROOT / "docs" / "serve-auth.md"


@pytest.fixture(scope="module")
def fixture_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The fixture plugin installed into a target folder, its tree compiled with it."""
    work = tmp_path_factory.mktemp("conformance")
    source = work / "plugin"
    shutil.copytree(PLUGIN, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(site), str(source)],
        check=True, capture_output=True, timeout=120)
    env = {**os.environ, "PYTHONPATH": str(site)}
    project = work / "project"
    shutil.copytree(PLUGIN / "capabilities", project / "capabilities")
    compiled = subprocess.run(
        [str(CAPC), "compile", "--plugins", "--strict", "-o", "build/manifest.json",
         "capabilities"], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return project, env


def test_capc_serve_passes_every_applicable_scenario(
        fixture_project: tuple[Path, dict[str, str]], tmp_path: Path):
    project, env = fixture_project
    port = free_port()
    command = [str(CAPC), "serve", "build/manifest.json", "--port", str(port)]
    results: list[ScenarioResult] = []
    with serving(command, port, cwd=project, env=env, log=tmp_path / "serve.log"):
        for version in SPEC_VERSIONS:
            results += run_scenarios(f"http://127.0.0.1:{port}/mcp/mcp-conformance",
                                     version, tmp_path)
    write_results(RESULTS, "capc serve", results)
    assert {row.scenario for row in results} == set(APPLICABLE)
    assert {row.version for row in results} == set(SPEC_VERSIONS)
    failed = {f"{row.version} {row.scenario}": row.failures() for row in results
              if not row.passed}
    assert not failed, failed
    # docs/serve-auth.md quotes the table: it must be this run's.
    assert RESULTS.with_suffix(".md").read_text() in DOCS.read_text(encoding="utf-8")
