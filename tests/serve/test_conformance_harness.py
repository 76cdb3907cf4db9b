"""The conformance harness judged on a known-good peer: the official SDK's own server.

Every applicable scenario of both spec versions passes against the fixtures served by the
``mcp`` SDK (tests/support/conformance_reference.py); so when capc serve's run
(test_conformance.py) fails a scenario, the failure is capc's, not the harness's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.conformance import (
    APPLICABLE,
    SPEC_VERSIONS,
    ScenarioResult,
    run_scenarios,
    write_results,
)
from tests.support.paths import REPO_ROOT
from tests.support.served_process import free_port, serving


def test_the_sdk_reference_passes_every_applicable_scenario(tmp_path: Path):
    port = free_port()
    command = [sys.executable, "-m", "tests.support.conformance_reference", str(port)]
    results: list[ScenarioResult] = []
    with serving(command, port, cwd=REPO_ROOT, log=tmp_path / "server.log"):
        for version in SPEC_VERSIONS:
            results += run_scenarios(f"http://127.0.0.1:{port}/mcp", version, tmp_path)
    write_results(tmp_path / "reference.json", "mcp SDK reference", results)
    ran = {(row.version, row.scenario) for row in results}
    assert ("2025-06-18", "tools-call-simple-text") in ran
    assert {scenario for _, scenario in ran} == set(APPLICABLE)
    assert ("2025-06-18", "json-schema-2020-12") not in ran  # a 2025-11-25 requirement
    failed = {f"{row.version} {row.scenario}": row.failures() for row in results
              if not row.passed}
    assert not failed
