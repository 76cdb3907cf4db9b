"""SPEC §12 "Cost": each tool is counted as the provider is sent it.

The figures of ``capc budget`` are checked against an independent computation: OpenAI's
published recipe (the cookbook's ``num_tokens_for_tools``, written out again here) and,
for Anthropic's estimate, the o200k tokens of the definition's compact JSON — both taken
over the definition the runtime actually binds (``tool_call_schema``, strict tools as
``provider_tools`` sends them), not over the manifest's own copy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.profiles.tokens import tiktoken_reference
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.tools.strict import provider_tools
from tests.support.capc import run_capc
from tests.support.trees import CRM, STRICT, WEATHER, budget_json, compile_tree, write_tree

pytestmark = pytest.mark.independent

PROFILE = """\
apiVersion: capc/v1
kind: Profile
name: {name}
capabilities: [{code}]
"""
CODES = {"get_weather": "get_weather", "crm_search": "crm_search",
         "crm_create": "crm_create", "order_create": "order_create"}


@pytest.fixture(scope="module")
def encoding() -> tiktoken.Encoding:
    return tiktoken_reference()


def recipe_tokens(function: dict[str, Any], encoding: tiktoken.Encoding) -> int:
    """The cookbook's per-function figure (gpt-4o constants), without the request's 12.
    A ``type`` list (a nullable field) is written ``a|b``."""
    def stripped(text: str) -> str:
        return text[:-1] if text.endswith(".") else text

    total = 7 + len(encoding.encode(f"{function['name']}:{stripped(function['description'])}"))
    properties = function["parameters"].get("properties") or {}
    if properties:
        total += 3
        for key, spec in properties.items():
            total += 3
            if "enum" in spec:
                total -= 3
                for item in spec["enum"]:
                    text = item if isinstance(item, str) else json.dumps(item)
                    total += 3 + len(encoding.encode(text))
            kind = spec.get("type", "")
            kind = "|".join(kind) if isinstance(kind, list) else kind
            total += len(encoding.encode(f"{key}:{kind}:{stripped(spec.get('description', ''))}"))
    return total


async def wire_definitions(manifest_path: Path, profile: str) -> dict[str, dict[str, Any]]:
    """The OpenAI function definitions the runtime binds for ``profile``'s tools."""
    manifest = load_manifest(manifest_path, registry=ToolRegistry())
    async with manifest:
        toolset = await manifest.resolve_profile(profile, RuntimeContext(
            settings=StaticSettings({})))
        bound = provider_tools(toolset.tools, "openai")
    definitions = {}
    for tool in bound:
        if isinstance(tool, dict):
            definitions[tool["function"]["name"]] = tool["function"]
        else:
            definitions[tool.name] = convert_to_openai_tool(tool)["function"]
    return definitions


@pytest.fixture(scope="module")
def one_tool_profiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("costs")
    profiles = "---\n".join(PROFILE.format(name=f"only-{index}", code=code)
                            for index, code in enumerate(CODES))
    write_tree(root, WEATHER, CRM, STRICT, profiles=profiles)
    compile_tree(root)
    return root


@pytest.mark.parametrize("index", range(len(CODES)))
async def test_openai_figure_is_the_recipe_over_what_is_bound(
    index: int, one_tool_profiles: Path, encoding: tiktoken.Encoding
) -> None:
    name = f"only-{index}"
    (profile,) = budget_json(one_tool_profiles, "--profile", name)["profiles"]
    (biggest,) = profile["providers"]["openai"]["biggest"]
    definitions = await wire_definitions(one_tool_profiles / "build" / "manifest.json", name)
    function = definitions[biggest["name"]]
    assert biggest["tokens"] == recipe_tokens(function, encoding)
    # The request's fixed 12 plus the one tool, nothing else up front.
    assert profile["providers"]["openai"]["up_front"]["tokens"] == 12 + biggest["tokens"]


@pytest.mark.parametrize("index", range(len(CODES)))
async def test_anthropic_estimate_is_the_bound_definitions_json(
    index: int, one_tool_profiles: Path, encoding: tiktoken.Encoding
) -> None:
    name = f"only-{index}"
    (profile,) = budget_json(one_tool_profiles, "--profile", name)["profiles"]
    anthropic = profile["providers"]["anthropic"]
    assert anthropic["estimate"] is True
    (biggest,) = anthropic["biggest"]
    function = (await wire_definitions(one_tool_profiles / "build" / "manifest.json",
                                       name))[biggest["name"]]
    text = json.dumps({"name": function["name"], "description": function["description"],
                       "input_schema": function["parameters"]},
                      separators=(",", ":"), ensure_ascii=False)
    assert biggest["tokens"] == len(encoding.encode(text))


INTERNAL = """\
apiVersion: capc/v1
kind: Capability
code: crm
name: CRM
type: internal
---
apiVersion: capc/v1
kind: Capability
code: base
name: Base
type: internal
"""


def test_compile_with_plugins_costs_internal_tools_as_budget_does(tmp_path: Path) -> None:
    """``compile --plugins`` records the plugin tools; its budget check must see them as
    ``capc budget`` does, not call them unknown ("compile with --plugins") and pass."""
    profile = ("apiVersion: capc/v1\nkind: Profile\nname: inner-bot\n"
               "capabilities: [base, crm]\nbudget: {tokens: 500}\n")
    write_tree(tmp_path, INTERNAL, profiles=profile)
    result = run_capc("compile", "--plugins", cwd=tmp_path)
    assert "profile-cost-unknown" not in result.stderr, result.stderr
    # crm's two tools and base's one, on Anthropic, are over 500 with its tool prompt.
    assert result.returncode == 1 and "error[profile-over-budget]" in result.stderr
    assert "crm_create_contact" in result.stderr or "crm_search_contacts" in result.stderr
    (tmp_path / "capabilities" / "profiles.yaml").write_text(
        profile.replace("{tokens: 500}", "{tokens: 5000}"))
    assert run_capc("compile", "--plugins", cwd=tmp_path).returncode == 0
    (report,) = budget_json(tmp_path)["profiles"]
    assert report["providers"]["openai"]["complete"] is True
    assert report["providers"]["openai"]["up_front"]["tools"] == 3


async def test_a_plugin_tools_override_is_costed_as_sent(tmp_path: Path) -> None:
    long_description = "Store one fact for later; " * 60
    override = ("apiVersion: capc/v1\nkind: ToolOverride\ntool: memory__remember\n"
                f"description: \"{long_description}\"\nnamespace: recall\n")
    write_tree(tmp_path, "apiVersion: capc/v1\nkind: Capability\ncode: memory\nname: Memory\n"
               "type: internal\n", override,
               profiles="apiVersion: capc/v1\nkind: Profile\nname: mem-bot\n"
                        "capabilities: [memory]\n")
    compile_tree(tmp_path, "--plugins")
    (profile,) = budget_json(tmp_path)["profiles"]
    costs = {tool["name"]: tool["tokens"] for tool in profile["providers"]["openai"]["biggest"]}
    manifest = load_manifest(tmp_path / "build" / "manifest.json", registry=None)
    async with manifest:
        toolset = await manifest.resolve_profile("mem-bot", RuntimeContext(
            user_id=1, settings=StaticSettings({})))
    sent = {tool.name for tool in toolset.tools}
    assert set(costs) == sent == {"recall__remember", "memory__recall"}
    assert costs["recall__remember"] > len(long_description) // 8
