"""Hostile profiles: a glob written to make a backtracking matcher explode, a profile that
matches thousands of tools, a schema too large to count. Each gives a located error or a
bounded result. Growth is timed n vs 8n (CPU time, best of 5) in a child process with a
time limit, and judged by ratio (linear work gives about 8; quadratic about 64)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compiler.profiles.globs import expand, glob_matches
from tests.support.capc import run_capc

GROWTH_SCRIPT = textwrap.dedent("""
    import gc, json, sys, time
    from types import MappingProxyType
    from compiler.profiles.globs import expand
    from compiler.profiles.budget import profile_costs
    from compiler.profiles.tokens import o200k
    from compiler.runtime.manifest.model import (
        ApiEndpoint, ApiToolEntry, CapabilityEntry, SourceLocation)
    from compiler.runtime.manifest.profile_entries import ProfileEntry

    def best(work):
        # The inputs were built before: the collector should not rescan them each run.
        gc.collect()
        gc.freeze()
        times = []
        for _ in range(5):
            start = time.process_time()  # CPU time: other processes' load does not count
            work()
            times.append(time.process_time() - start)
        return min(times)

    def entries(n):
        return [CapabilityEntry(
            code=f"tool_{i:06d}", name="t", description=None, type="api",
            metadata=MappingProxyType({}), when=None, source=SourceLocation("a.yaml", 1),
            api=ApiEndpoint(url="https://x.example/"),
            tool=ApiToolEntry(f"tool_{i:06d}", f"tool_{i:06d}", f"Tool number {i}.",
                              {"type": "object", "properties": {
                                  "q": {"type": "string", "description": "Search text"}}}))
            for i in range(n)]

    count = o200k()
    def costs(n):
        caps = entries(n)
        profile = ProfileEntry("big-bot", None, tuple(c.code for c in caps),
                               tuple(c.code for c in caps[::2]))
        return lambda: profile_costs([profile], caps, {}, count)

    bomb = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"
    def globs(n):
        codes = ["a" * 64 + str(i) for i in range(n)]
        return lambda: expand([bomb, "a*0", "*?*?*?*?*?*?*x"], codes)

    n = int(sys.argv[1])
    print(json.dumps({"glob": best(globs(8 * n)) / best(globs(n)),
                      "costs": best(costs(8 * n)) / best(costs(n))}))
""")


def test_globs_and_costs_grow_linearly() -> None:
    result = subprocess.run([sys.executable, "-c", GROWTH_SCRIPT, "1000"], capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    ratios = json.loads(result.stdout)
    assert ratios["glob"] < 20, ratios
    assert ratios["costs"] < 20, ratios


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("crm_*", "crm_search", True), ("crm_*", "crm_", True), ("crm_*", "crmx", False),
    ("get_?", "get_a", True), ("get_?", "get_", False), ("*", "", True), ("", "", True),
    ("*a*b", "xaxxb", True), ("*a*b", "xaxxbc", False), ("a*b*c", "abbbbc", True),
    ("?*", "", False), ("*a*a*a*a*b", "a" * 60, False), ("**", "x", True),
])
def test_glob_matching(pattern: str, text: str, expected: bool) -> None:
    assert glob_matches(pattern, text) is expected


def test_expand_keeps_order_and_reports_unmatched() -> None:
    codes = ["crm_b", "crm_a", "get_weather"]
    assert expand(["crm_*", "get_weather", "nope", "x*"], codes) == {
        "crm_*": ["crm_a", "crm_b"], "get_weather": ["get_weather"], "nope": [], "x*": []}


def test_a_profile_of_thousands_of_tools_is_bounded_and_located(tmp_path: Path) -> None:
    tools = "---\n".join(f"""\
apiVersion: capc/v1
kind: Capability
code: t{index:04d}
name: t
type: api
options: {{description: "Tool {index}.", url: "https://api.example.com/t{index}"}}
""" for index in range(1500))
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "tools.yaml").write_text(tools)
    (tmp_path / "capabilities" / "profile.yaml").write_text("""\
apiVersion: capc/v1
kind: Profile
name: all-bot
capabilities: ["*"]
budget: {tokens: 1000}
""")
    result = run_capc("validate", "capabilities", cwd=tmp_path, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error[" in line]
    assert {line.split("error[")[1].split("]")[0] for line in errors} == {
        "profile-over-budget", "profile-provider-limit"}
    assert all(line.startswith("capabilities/profile.yaml:") for line in errors)
    assert max(len(line) for line in errors) < 1200  # ten names and "and N more", not 1500
    assert "more" in result.stderr


def test_a_tool_too_large_to_count_is_reported(tmp_path: Path) -> None:
    properties = "\n".join(f"    p{index}: {{type: string, description: {'d' * 120}}}"
                           for index in range(2000))
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "tools.yaml").write_text(f"""\
apiVersion: capc/v1
kind: Capability
code: huge
name: Huge
type: api
options:
  description: A tool with a huge schema.
  url: https://api.example.com/huge
  params:
{properties}
---
apiVersion: capc/v1
kind: Profile
name: huge-bot
capabilities: [huge]
budget: {{tokens: 100000}}
""")
    result = run_capc("validate", "capabilities", cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "error[profile-uncountable-tool]" in result.stderr
    assert "tool 'huge' cannot be counted (its definition is" in result.stderr
