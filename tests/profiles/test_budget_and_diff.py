"""``capc budget`` and ``capc diff`` on compiled trees with profiles, through the real CLI;
provider limits and hostile profiles at compile time."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.capc import run_capc

PROFILE = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: {codes}
deferred: {deferred}
budget: {{tokens: {tokens}, tools: 40}}
"""


def api_tool(code: str, description: str = "Search the CRM.") -> str:
    return f"""\
apiVersion: capc/v1
kind: Capability
code: {code}
name: {code} tool
type: api
options:
  description: {description}
  url: https://api.example.com/{code}
  params:
    q: {{type: string, description: Search text, required: true}}
"""


def tree(root: Path, codes: list[str], profile: str) -> Path:
    (root / "capabilities").mkdir(parents=True, exist_ok=True)
    (root / "capabilities" / "tools.yaml").write_text("---\n".join(api_tool(c) for c in codes))
    (root / "capabilities" / "profiles.yaml").write_text(profile)
    return root


def compiled(root: Path) -> Path:
    result = run_capc("compile", "capabilities", "-o", "build/manifest.json", cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "build" / "manifest.json"


def test_budget_reports_up_front_and_deferred_per_provider(tmp_path: Path) -> None:
    root = tree(tmp_path, ["get_weather", "crm_search", "crm_create"],
                PROFILE.format(codes="[get_weather, crm_*]", deferred="[crm_*]", tokens=5000))
    compiled(root)
    result = run_capc("budget", "--format", "json", cwd=root)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (profile,) = report["profiles"]
    openai, anthropic = profile["providers"]["openai"], profile["providers"]["anthropic"]
    assert openai["up_front"]["tools"] == 2  # get_weather and the tool search
    assert openai["deferred"]["tools"] == 2 and openai["deferred"]["tokens"] > 0
    assert [tool["name"] for tool in openai["biggest"]] == ["get_weather"]
    assert openai["estimate"] is False and anthropic["estimate"] is True
    assert anthropic["up_front"]["tokens"] > openai["up_front"]["tokens"]  # the tool prompt
    text = run_capc("budget", "--profile", "support-bot", cwd=root)
    assert text.returncode == 0 and "profile support-bot" in text.stdout
    assert "~" in text.stdout  # Anthropic figures are labelled estimates
    markdown = run_capc("budget", "--format", "markdown", cwd=root)
    assert "| support-bot | openai | 2 |" in markdown.stdout


def test_budget_of_an_unknown_profile_is_a_usage_error(tmp_path: Path) -> None:
    root = tree(tmp_path, ["get_weather"], PROFILE.format(codes="[get_weather]", deferred="[]",
                                                         tokens=5000))
    compiled(root)
    result = run_capc("budget", "--profile", "nope-bot", cwd=root)
    assert result.returncode == 2 and "support-bot" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unpinned_server_is_unknown_not_zero(tmp_path: Path) -> None:
    root = tmp_path
    (root / "capabilities").mkdir()
    (root / "capabilities" / "wiki.yaml").write_text("""\
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options: {server_label: deepwiki, server_url: "https://mcp.deepwiki.com/mcp"}
---
apiVersion: capc/v1
kind: Profile
name: wiki-bot
capabilities: [deepwiki]
""")
    compiled(root)
    report = json.loads(run_capc("budget", "--format", "json", cwd=root).stdout)
    openai = report["profiles"][0]["providers"]["openai"]
    assert openai["complete"] is False
    assert openai["unknown"] == [{"capability": "deepwiki", "reason": (
        "MCP server 'deepwiki' is not pinned (run capc lock): its tools are unknown")}]
    assert ">=" in run_capc("budget", cwd=root).stdout


def test_over_128_openai_tools_fails_the_compile_naming_tools(tmp_path: Path) -> None:
    codes = [f"tool_{index:03d}" for index in range(130)]
    root = tree(tmp_path, codes, PROFILE.format(codes="[tool_*]", deferred="[]", tokens=10**6)
                .replace("tools: 40", "tools: 1000"))
    result = run_capc("compile", "capabilities", "-o", "build/manifest.json", cwd=root)
    assert result.returncode == 1
    assert "error[profile-provider-limit]" in result.stderr
    # Two too many, and deferring adds the search tool: the three biggest (ties by name).
    assert ("sends 130 tools up front; an OpenAI request takes at most 128: defer or trim "
            "tool_000, tool_001, tool_002\n") in result.stderr
    assert not (root / "build" / "manifest.json").exists()
    # Deferring them is the fix the message names.
    (root / "capabilities" / "profiles.yaml").write_text(
        PROFILE.format(codes="[tool_*]", deferred="[tool_1*]", tokens=10**6)
        .replace("tools: 40", "tools: 1000"))
    compiled(root)


def test_diff_shows_tools_and_tokens_per_profile_and_ranks_a_gain(tmp_path: Path) -> None:
    old = tree(tmp_path / "old", ["get_weather", "crm_search"],
               PROFILE.format(codes="[get_weather]", deferred="[]", tokens=5000))
    new = tree(tmp_path / "new", ["get_weather", "crm_search"],
               PROFILE.format(codes="[get_weather, crm_search]", deferred="[]", tokens=5000))
    result = run_capc("diff", str(compiled(old)), str(compiled(new)), "--format", "json")
    report = json.loads(result.stdout)
    (entry,) = [e for e in report["entries"] if e["kind"] == "profile"]
    assert entry["key"] == "support-bot" and entry["status"] == "changed"
    fields = {field["path"]: field for field in entry["fields"]}
    assert fields["capabilities.crm_search"] == {"path": "capabilities.crm_search",
                                                 "new": "granted"}
    assert fields["tools.crm_search"]["new"] == "offered"
    tokens = fields["tokens_up_front.openai"]
    assert tokens["new"] > tokens["old"] > 0
    assert [(f["kind"], f["entry"]) for f in report["security"]] == [
        ("profile-gains-capability", "support-bot")]
    text = run_capc("diff", str(old / "build/manifest.json"), str(new / "build/manifest.json"))
    assert "profiles 1 changed" in text.stdout
    # Removing it again is a change, but not a security-relevant one.
    back = run_capc("diff", str(new / "build/manifest.json"), str(old / "build/manifest.json"),
                    "--fail-on", "security")
    assert back.returncode == 0 and "tools.crm_search" in back.stdout
