"""The budget rules in-process: a budget a byte bound proves met never loads the encoding,
a doubtful one without the encoding is a located error, and deferred MCP entries keep the
shape of each provider's SDK types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaMCPToolsetParam
from openai.types.responses.tool_param import Mcp
from pydantic import ConfigDict, TypeAdapter, with_config

import compiler.profiles.budget_check as budget_check
from compiler.manifest import manifest_model
from compiler.profiles.budget import profile_costs
from compiler.profiles.tokens import EncodingUnavailable, o200k, utf8_upper_bound
from compiler.runtime.loading_policy import (
    LoadingPolicy,
    defer_anthropic_toolset,
    defer_openai_entry,
)
from tests.profiles.trees import WEATHER
from tests.support.trees import build_documents as compile_documents

TOOLS = WEATHER + """\
---
apiVersion: capc/v1
kind: Profile
name: weather-bot
capabilities: [get_weather]
budget: {tokens: TOKENS}
"""


def compile_tree(tmp_path: Path, tokens: int) -> Any:
    return compile_documents(tmp_path, TOOLS.replace("TOKENS", str(tokens)))


def no_encoding() -> Any:
    raise EncodingUnavailable("counting tokens needs the o200k encoding: install capc[budget]")


def test_a_budget_met_even_at_a_token_per_byte_needs_no_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget_check, "o200k", no_encoding)
    result = compile_tree(tmp_path, 100_000)
    assert result.manifest is not None, result.diagnostics
    assert [d.code for d in result.diagnostics] == []


def test_a_doubtful_budget_without_the_encoding_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget_check, "o200k", no_encoding)
    result = compile_tree(tmp_path, 100)  # the byte bound is above 100 on Anthropic
    assert result.manifest is None
    (problem,) = [d for d in result.diagnostics if d.is_error]
    assert problem.code == "profile-no-tokenizer" and "capc[budget]" in problem.message
    assert (problem.path, problem.line) == (
        "capabilities/a.yaml", TOOLS.splitlines().index("budget: {tokens: TOKENS}") + 1)


def test_a_doubtful_budget_is_counted_exactly(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    model = compile_tree(tmp_path, 100_000).manifest
    assert model is not None
    parsed = manifest_model(model)

    def most(count: Any) -> int:
        (cost,) = profile_costs(parsed.profiles, parsed.capabilities, {}, count)
        return max(on.upfront_tokens for on in cost.providers)

    exact, bound = most(o200k()), most(utf8_upper_bound)
    assert exact < bound
    loads: list[int] = []
    monkeypatch.setattr(budget_check, "o200k", lambda: loads.append(1) or o200k())
    # Between the two: the bound is in doubt, the exact count decides, and it holds.
    assert compile_tree(tmp_path, (exact + bound) // 2).manifest is not None
    assert loads == [1]
    assert compile_tree(tmp_path, exact - 1).manifest is None


def strict(typed_dict: type) -> TypeAdapter[Any]:
    subclass = type(typed_dict.__name__, (typed_dict,), {})
    return TypeAdapter(with_config(ConfigDict(extra="forbid"))(subclass))


def test_deferred_mcp_entries_validate_against_the_sdk_types() -> None:
    openai = defer_openai_entry({"type": "mcp", "server_label": "calc",
                                 "server_url": "https://calc.example.com/mcp",
                                 "require_approval": "never", "allowed_tools": ["add"]})
    strict(Mcp).validate_python(openai)
    assert openai["defer_loading"] is True
    anthropic = defer_anthropic_toolset({
        "type": "mcp_toolset", "mcp_server_name": "calc",
        "default_config": {"enabled": False}, "configs": {"add": {"enabled": True}}})
    strict(BetaMCPToolsetParam).validate_python(anthropic)
    assert anthropic["default_config"] == {"enabled": False, "defer_loading": True}
    assert anthropic["configs"] == {"add": {"enabled": True, "defer_loading": True}}


def test_the_search_tool_is_added_only_when_something_is_deferred() -> None:
    policy = LoadingPolicy("support-bot", frozenset({"crm"}))
    assert policy.search_tool("openai", False) is None
    assert policy.search_tool("openai", True) == {"type": "tool_search"}
    assert policy.search_tool("langchain", True) is None
