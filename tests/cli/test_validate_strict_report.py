"""``capc validate --format json`` reports, per api tool, whether each provider's strict
tool calling can take its schema and why not (SPEC §10), beside the diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.capc import run_capc

TREE = """\
apiVersion: capc/v1
kind: Capability
code: open_map
name: Open Map
type: api
options:
  description: Takes labels
  method: POST
  url: https://api.example.com/v1/things
  body:
    labels: {type: object, additional_properties: {type: string}}
---
apiVersion: capc/v1
kind: Capability
code: closed
name: Closed
type: api
options:
  description: Takes items
  method: POST
  url: https://api.example.com/v1/items
  strict: true
  body:
    items: {type: array, items: {type: object, properties: {id: {type: integer}}}}
"""


def test_validate_json_reports_strict_compatibility_per_tool_and_provider(
        tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "tools.yaml").write_text(TREE)
    result = run_capc("validate", "capabilities", "--format", "json", "--no-cache",
                      cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert {entry["code"] for entry in entries} == {"strict-compatibility"}
    assert all(entry["severity"] == "info" for entry in entries)
    tools = {tool["tool"]: tool for tool in entries}
    assert tools["closed"]["strict"] is True
    assert tools["closed"]["providers"] == {
        "openai": {"strict_compatible": True, "problems": []},
        "anthropic": {"strict_compatible": True, "problems": []}}
    assert tools["open_map"]["strict"] is False
    for provider in ("openai", "anthropic"):
        verdict = tools["open_map"]["providers"][provider]
        assert verdict["strict_compatible"] is False
        assert verdict["problems"] == ["labels: an open map (any key): strict mode needs "
                                       "every object closed, with its fields listed"]
    assert tools["open_map"]["message"].startswith("tool open_map: strict tool calling "
                                                   "possible with no provider; not with OpenAI")
    assert (tools["closed"]["path"], tools["closed"]["line"]) == ("capabilities/tools.yaml", 13)


def test_a_strict_tool_with_an_open_map_is_refused_where_the_map_is(tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "tools.yaml").write_text(
        TREE.replace("  body:\n    labels", "  strict: true\n  body:\n    labels"))
    result = run_capc("validate", "capabilities", "--format", "json", "--no-cache",
                      cwd=tmp_path)
    assert result.returncode == 1
    (problem,) = json.loads(result.stdout)  # no manifest: no tool entries
    assert (problem["code"], problem["line"]) == ("api-strict-schema", 12)
    assert "OpenAI and Anthropic (labels): an open map" in problem["message"]
