"""``capc budget`` (SPEC §12) in every format, with the exit codes of docs/cli.md, on trees
compiled from YAML; a manifest over its budget is made the way it would reach a reviewer
(the compiler refuses to write one): edited and resealed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.runtime import seal
from tests.support.trees import CRM, WEATHER, compile_tree, write_tree

pytestmark = pytest.mark.independent

FORMATS = ("text", "json", "markdown")
PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
budget: {tokens: 5000, tools: 10}
---
apiVersion: capc/v1
kind: Profile
name: crm-bot
capabilities: [crm_*]
budget: {tokens: 5000}
"""
HUGE_PARAMETERS = "\n".join(
    f"    p{index}: {{{{type: string, description: {'d' * 150}}}}}" for index in range(1500))
HUGE = f"""\
apiVersion: capc/v1
kind: Capability
code: huge_tool
name: Huge
type: api
options:
  description: A tool too large to count.
  url: {{base}}/huge
  params:
{HUGE_PARAMETERS}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget")
    write_tree(root, WEATHER, CRM, profiles=PROFILES)
    manifest = compile_tree(root)
    document = json.loads(manifest.read_text())
    for profile in document["profiles"]:
        if profile["name"] == "crm-bot":
            profile["budget"] = {"tokens": 20}
    (root / "over.json").write_text(json.dumps(seal(document)))
    (root / "tampered.json").write_text(manifest.read_text().replace("get_weather", "get_wetter"))
    return root


@pytest.mark.parametrize("output_format", FORMATS)
def test_exit_codes_in_every_format(project: Path, output_format: str) -> None:
    def code(*args: str) -> int:
        result = run_capc("budget", "--format", output_format, *args, cwd=project)
        assert "Traceback" not in result.stderr
        return result.returncode

    assert code() == 0
    assert code("-m", "over.json") == 1
    assert code("-m", "over.json", "--profile", "support-bot") == 0
    assert code("-m", "over.json", "--profile", "crm-bot") == 1
    assert code("--profile", "no-such-bot") == 2
    assert code("-m", "missing.json") == 2
    assert code("-m", "tampered.json") == 1


def test_the_over_budget_profile_is_flagged_in_every_format(project: Path) -> None:
    shown = {output_format: run_capc("budget", "-m", "over.json", "--format", output_format,
                                     cwd=project).stdout for output_format in FORMATS}
    report = json.loads(shown["json"])
    assert {p["name"]: p["over_budget"] for p in report["profiles"]} == {
        "crm-bot": True, "support-bot": False}
    assert "OVER BUDGET" in shown["text"] and "**over**" in shown["markdown"]
    for text in (shown["text"], shown["markdown"]):
        assert "crm_create" in text and "crm_search" in text  # the tools to defer


def test_a_manifest_without_profiles_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, WEATHER)
    compile_tree(tmp_path)
    outcomes = {f: run_capc("budget", "--format", f, cwd=tmp_path) for f in FORMATS}
    assert {f: r.returncode for f, r in outcomes.items()} == dict.fromkeys(FORMATS, 0)
    assert json.loads(outcomes["json"].stdout)["profiles"] == []
    assert "no profiles" in outcomes["text"].stdout


@pytest.fixture(scope="module")
def huge_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("huge")
    write_tree(root, WEATHER, HUGE, profiles=(
        "apiVersion: capc/v1\nkind: Profile\nname: big-bot\n"
        "capabilities: [get_weather, huge_tool]\n"))
    compile_tree(root)
    return root


def test_an_uncountable_tool_is_named_in_json(huge_project: Path) -> None:
    result = run_capc("budget", "--format", "json", cwd=huge_project)
    (profile,) = json.loads(result.stdout)["profiles"]
    for provider in profile["providers"].values():
        assert provider["complete"] is False
        assert [tool["name"] for tool in provider["uncountable"]] == ["huge_tool"]


@pytest.mark.parametrize("output_format", ["text", "markdown"])
def test_an_uncountable_tool_is_named_in_text_and_markdown(
    huge_project: Path, output_format: str
) -> None:
    result = run_capc("budget", "--format", output_format, cwd=huge_project)
    assert result.returncode == 0
    assert "huge_tool" in result.stdout and "characters" in result.stdout


def _advised(stderr: str) -> set[str]:
    """The tools every profile-over-budget error says to defer or trim."""
    names: set[str] = set()
    for line in stderr.splitlines():
        if "error[profile-over-budget]" in line and "defer or trim " in line:
            advice = line.split("defer or trim ", 1)[1].split(";", 1)[0]
            names |= {part.strip().split(" ", 1)[0] for part in advice.split(",")}
    return names


@pytest.mark.parametrize("budget", ["{tools: 2}", "{tokens: 450}"])
def test_deferring_what_the_error_advises_brings_the_profile_within_budget(
    tmp_path: Path, budget: str
) -> None:
    def profile(deferred: str) -> str:
        return ("apiVersion: capc/v1\nkind: Profile\nname: crm-bot\n"
                f"capabilities: [get_weather, crm_*]\n{deferred}budget: {budget}\n")

    write_tree(tmp_path, WEATHER, CRM, profiles=profile(""))
    first = run_capc("validate", cwd=tmp_path)
    assert first.returncode == 1
    advised = _advised(first.stderr)
    assert advised and advised < {"get_weather", "crm_search", "crm_create"}
    (tmp_path / "capabilities" / "profiles.yaml").write_text(
        profile(f"deferred: [{', '.join(sorted(advised))}]\n"))
    second = run_capc("validate", cwd=tmp_path)
    assert "profile-over-budget" not in second.stderr, second.stderr
