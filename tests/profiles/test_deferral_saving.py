"""What ``profile-over-budget`` and ``capc budget`` say deferring saves is what deferring
saves: on OpenAI a deferred function outside a namespace still shows its name and
description, so the saving is its definition less that line, checked by compiling the
profile again with the advised tools deferred."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from compiler.manifest import manifest_model
from compiler.profiles.budget import profile_costs
from compiler.profiles.tokens import o200k
from tests.profiles.trees import CRM, WEATHER
from tests.support.trees import build_documents as compile_tree

TOOLS = WEATHER + "---\n" + CRM

pytest.importorskip("toktok")

PROFILE = """\
apiVersion: capc/v1
kind: Profile
name: lean-bot
capabilities: [get_weather, crm_*]
deferred: [get_weather]
budget: {tokens: 60}
"""


def openai_upfront(tmp_path: Path, profile: str) -> tuple[Any, int]:
    result = compile_tree(tmp_path, TOOLS, profile.replace("budget: {tokens: 60}\n", ""))
    assert result.manifest is not None, result.diagnostics
    parsed = manifest_model(result.manifest)
    (cost,) = profile_costs(parsed.profiles, parsed.capabilities, {}, o200k())
    return cost, cost.on("openai").upfront_tokens


def test_the_advised_saving_is_what_deferring_saves_on_openai(tmp_path: Path) -> None:
    result = compile_tree(tmp_path, TOOLS, PROFILE)
    assert result.manifest is None
    (problem,) = [d for d in result.diagnostics
                  if d.code == "profile-over-budget" and "to openai" in d.message]
    advised = re.search(r"defer or trim (.*); deferring them saves (\d+) tokens",
                        problem.message)
    assert advised, problem.message
    names = re.findall(r"(\w+) \(\d+\)", advised.group(1))
    before_cost, before = openai_upfront(tmp_path, PROFILE)
    deferred = PROFILE.replace("deferred: [get_weather]",
                               f"deferred: [get_weather, {', '.join(names)}]")
    after_cost, after = openai_upfront(tmp_path, deferred)
    assert before - after == int(advised.group(2))
    # And the saving is less than the definitions themselves: the lines stay.
    full = sum(tool.tokens or 0 for tool in before_cost.on("openai").upfront
               if tool.name in names)
    assert 0 < int(advised.group(2)) < full
    assert after_cost.on("openai").namespaces == 0
