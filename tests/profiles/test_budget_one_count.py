"""``capc compile`` and ``capc budget`` count a profile's tokens through one path (issue 30,
item 9): the same budget passes or fails both; ``capc budget`` warns on a stale manifest as
``capc explain`` does, and its JSON lists every tool, not the biggest few."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.runtime import seal

# Nested, enumerated, constrained parameters: the schema capc builds is not key-sorted,
# the manifest (written key-sorted) gives it back sorted.
SEARCH = """\
apiVersion: capc/v1
kind: Capability
code: search_issues
name: Search Issues
type: api
options:
  description: Search the issues of a repository by labels, assignees and state
  url: https://api.tracker.example.com/repos/{owner}/{repo}/issues
  path_params:
    owner: {type: string, description: Owner of the repository}
    repo: {type: string, description: Name of the repository}
  params:
    labels:
      type: array
      description: Only issues with all of these labels
      items: {type: string, enum: [bug, feature, docs, question]}
      max_items: 10
      style: comma
    filter:
      type: object
      description: Filter on the issue's fields
      style: deep_object
      properties:
        state: {type: string, enum: [open, closed, all], required: true}
        since: {type: string, format: date-time, description: Updated at or after}
"""
TOOLS = [f"""\
apiVersion: capc/v1
kind: Capability
code: tool_{index}
name: Tool {index}
type: api
options:
  description: Look up record {index} by its identifier
  url: https://api.example.com/records/{index}
  params:
    id: {{type: string, description: The record identifier, required: true}}
""" for index in range(7)]
PROFILE = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [search_issues, tool_*]
budget: {{tokens: {tokens}}}
"""


def write(root: Path, tokens: int) -> None:
    folder = root / "capabilities"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.yaml").write_text("---\n".join([SEARCH, *TOOLS]), encoding="utf-8")
    (folder / "profile.yaml").write_text(PROFILE.format(tokens=tokens), encoding="utf-8")


def budget_json(root: Path, manifest: str = "build/manifest.json") -> tuple[int, dict]:
    result = run_capc("budget", "-m", manifest, "--format", "json", cwd=root)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.fixture(scope="module")
def anthropic_count(tmp_path_factory: pytest.TempPathFactory) -> int:
    root = tmp_path_factory.mktemp("count")
    write(root, 1_000_000)
    assert run_capc("compile", cwd=root).returncode == 0
    code, report = budget_json(root)
    assert code == 0
    anthropic = report["profiles"][0]["providers"]["anthropic"]
    openai = report["profiles"][0]["providers"]["openai"]
    assert anthropic["up_front"]["tokens"] > openai["up_front"]["tokens"]
    return int(anthropic["up_front"]["tokens"])


@pytest.mark.parametrize("margin", [0, -1], ids=["equal", "one-less"])
def test_a_budget_passes_or_fails_compile_and_budget_alike(
        tmp_path: Path, anthropic_count: int, margin: int) -> None:
    budget = anthropic_count + margin
    write(tmp_path, budget)
    compiled = run_capc("compile", cwd=tmp_path)
    # capc budget reads a manifest: the compiler refuses to write one over its budget, so
    # a reviewer's over-budget manifest is the passing one with its budget edited, resealed.
    write(tmp_path / "loose", 1_000_000)
    assert run_capc("compile", cwd=tmp_path / "loose").returncode == 0
    document = json.loads((tmp_path / "loose" / "build" / "manifest.json").read_text())
    document["profiles"][0]["budget"] = {"tokens": budget}
    (tmp_path / "edited.json").write_text(json.dumps(seal(document)), encoding="utf-8")
    code, report = budget_json(tmp_path, "edited.json")
    if margin == 0:
        assert compiled.returncode == 0, compiled.stderr
        assert code == 0 and report["profiles"][0]["budget_state"] == "within"
    else:
        assert compiled.returncode == 1
        assert f"sends {anthropic_count} tokens of tool definitions up front to anthropic" in (
            compiled.stderr)
        assert code == 1 and report["profiles"][0]["budget_state"] == "over"


def test_budget_json_lists_every_tool(tmp_path: Path) -> None:
    write(tmp_path, 1_000_000)
    assert run_capc("compile", cwd=tmp_path).returncode == 0
    _, report = budget_json(tmp_path)
    for provider in ("openai", "anthropic"):
        shown = report["profiles"][0]["providers"][provider]
        assert len(shown["biggest"]) == 5  # the advice stays the top five
        tools = shown["tools"]
        assert sorted(tool["name"] for tool in tools) == sorted(
            ["search_issues", *(f"tool_{index}" for index in range(7))])
        assert all(tool["tokens"] > 0 and tool["deferred"] is False for tool in tools)
        assert sum(tool["tokens"] for tool in tools) < shown["up_front"]["tokens"]


def test_budget_warns_when_the_manifest_is_older_than_its_sources(tmp_path: Path) -> None:
    write(tmp_path, 1_000_000)
    assert run_capc("compile", cwd=tmp_path).returncode == 0
    source = tmp_path / "capabilities" / "tools.yaml"
    manifest = tmp_path / "build" / "manifest.json"
    for each in (tmp_path / "capabilities").iterdir():
        os.utime(each, (1_000_000, 1_000_000))
    os.utime(manifest, (2_000_000, 2_000_000))
    fresh = run_capc("budget", cwd=tmp_path)
    assert fresh.returncode == 0 and "older than" not in fresh.stderr
    os.utime(source, (3_000_000, 3_000_000))
    for output_format in ("text", "json"):
        stale = run_capc("budget", "--format", output_format, cwd=tmp_path)
        assert stale.returncode == 0
        assert "build/manifest.json is older than 1 of the sources it names" in stale.stderr
        assert "capabilities/tools.yaml" in stale.stderr and "capc compile" in stale.stderr
    assert run_capc("budget", cwd=tmp_path).stdout == fresh.stdout


def test_a_profile_name_needs_no_hyphen_and_a_refused_one_is_explained(tmp_path: Path) -> None:
    write(tmp_path, 1_000_000)
    profile = tmp_path / "capabilities" / "profile.yaml"
    profile.write_text(profile.read_text().replace("name: support-bot", "name: support"))
    accepted = run_capc("validate", "--strict", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    profile.write_text(profile.read_text().replace("name: support", "name: Support_Bot"))
    refused = run_capc("validate", cwd=tmp_path)
    assert refused.returncode == 1
    assert "profile.yaml:3:7: error[schema-pattern]" in refused.stderr
    assert "lowercase words joined by hyphens" in refused.stderr
    assert "[a-z" not in refused.stderr and "^" not in refused.stderr  # no raw regex


def test_over_budget_advice_names_namespaces_where_they_would_help(tmp_path: Path) -> None:
    write(tmp_path, 120)  # deferring alone leaves eight name-and-description lines on OpenAI
    result = run_capc("compile", cwd=tmp_path)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "profile-over-budget" in line]
    openai = next(line for line in lines if "up front to openai" in line)
    anthropic = next(line for line in lines if "up front to anthropic" in line)
    assert "outside a namespace" in openai and "profile's namespaces" in openai
    assert "namespace" not in anthropic  # Anthropic has no namespaces: no such advice
