"""A ToolOverride of a plugin tool is costed as the loader applies it at boot (issue 24).

The plugin's own definition is not what the model is sent once an override renames it,
rewrites its description or patches its schema: compile's budget check, ``capc budget``
and the runtime must all see the overridden tool. Real plugin (the installed ``memory``
entry point), real CLI, real loader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.manifest import read_manifest_model
from compiler.profiles.definitions import boot_overrides, capability_tools
from compiler.runtime import RuntimeContext, StaticSettings, load_manifest
from compiler.runtime.manifest.fields import thaw
from tests.support.capc import run_capc

LONG = "Store one fact about the user for later turns. " * 40
MEMORY = "apiVersion: capc/v1\nkind: Capability\ncode: memory\nname: Memory\ntype: internal\n"
OVERRIDES = f"""\
apiVersion: capc/v1
kind: ToolOverride
tool: memory__remember
description: "{LONG}"
namespace: recall
---
apiVersion: capc/v1
kind: ToolOverride
tool: memory__remember
description_append: " Never store secrets."
input_schema_patch:
  properties:
    importance: {{type: integer, description: How much the fact matters, from 1 to 5}}
consumer_only: [importance]
"""


def _tree(root: Path, budget: str, overrides: str = OVERRIDES) -> Path:
    sources = root / "capabilities"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "memory.yaml").write_text(MEMORY)
    (sources / "overrides.yaml").write_text(overrides)
    (sources / "profiles.yaml").write_text(
        "apiVersion: capc/v1\nkind: Profile\nname: mem-bot\ncapabilities: [memory]\n"
        f"budget: {budget}\n")
    return root


def _compiled_tokens(stderr: str) -> dict[str, int]:
    """Each provider's up-front figure in compile's profile-over-budget errors."""
    found = re.findall(r"sends (\d+) tokens of tool definitions up front to (\w+)", stderr)
    assert {provider for _, provider in found} == {"openai", "anthropic"}, stderr
    return {provider: int(tokens) for tokens, provider in found}


def _budget(root: Path) -> dict[str, Any]:
    result = run_capc("budget", "--format", "json", cwd=root)
    assert result.returncode == 0, result.stderr
    (profile,) = json.loads(result.stdout)["profiles"]
    return dict(profile["providers"])


@pytest.mark.parametrize("overridden", [True, False], ids=["overridden", "as-registered"])
def test_compile_and_budget_cost_the_same_tools(tmp_path: Path, overridden: bool) -> None:
    overrides = OVERRIDES if overridden else OVERRIDES.replace("memory__", "absent__")
    _tree(tmp_path, "{tokens: 1}", overrides)
    refused = run_capc("compile", "--plugins", cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    compiled = _compiled_tokens(refused.stderr)
    remember = "recall__remember" if overridden else "memory__remember"
    assert remember in refused.stderr  # the advice names the tool as the model sees it
    # At exactly the figures compile reported, the profile is within budget.
    _tree(tmp_path, f"{{tokens: {max(compiled.values())}}}", overrides)
    accepted = run_capc("compile", "--plugins", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    reported = _budget(tmp_path)
    assert {provider: on["up_front"]["tokens"] for provider, on in reported.items()} == compiled
    for on in reported.values():
        assert on["complete"] is True
        assert {tool["name"] for tool in on["biggest"]} == {remember, "memory__recall"}
    if overridden:  # the long description is paid for
        assert compiled["openai"] > len(LONG) // 8


async def test_the_costed_definition_is_the_one_the_runtime_binds(tmp_path: Path) -> None:
    _tree(tmp_path, "{tools: 5}")
    assert run_capc("compile", "--plugins", cwd=tmp_path).returncode == 0
    manifest_path = tmp_path / "build" / "manifest.json"
    model = read_manifest_model(str(manifest_path))
    (entry,) = model.capabilities
    costed = {definition.name: definition for definition in capability_tools(
        entry, thaw(model.plugins), boot_overrides(model.overrides)).definitions}
    manifest = load_manifest(manifest_path, registry=None)
    async with manifest:
        toolset = await manifest.resolve_profile("mem-bot", RuntimeContext(
            user_id=1, settings=StaticSettings({})))
    bound = {tool.name: convert_to_openai_tool(tool)["function"] for tool in toolset.tools}
    assert set(costed) == set(bound) == {"recall__remember", "memory__recall"}
    for name, function in bound.items():
        assert costed[name].description == function["description"], name
        assert costed[name].input_schema == function["parameters"], name
    assert costed["recall__remember"].description.endswith("Never store secrets.")
    assert "importance" in costed["recall__remember"].input_schema["properties"]
