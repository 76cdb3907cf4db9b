"""Anthropic's tool search variant (SPEC §12: BM25 "by default"): a toolset switched to the
regex search with ``with_anthropic_search("regex")`` sends exactly one
``tool_search_tool_regex_20251119`` entry, validated against the installed SDK types and
seen on a loopback look-alike of the Messages API through ChatAnthropic and
``init_chat_model``; the default stays BM25, OpenAI is untouched, and a bad choice is
refused with the choices named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaToolUnionParam
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain.chat_models import init_chat_model
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import StructuredTool
from pydantic import TypeAdapter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, attach_mcp, load_manifest
from tests.support.agents import anthropic_text, provider_server, request_bodies, unknown_keys
from tests.support.runtime import (
    api_capability,
    internal_capability,
    manifest_document,
    mcp_capability,
    seal,
)

QUERY = {"q": {"type": "string", "description": "Search text"}}
ARGUMENTS = {"q": {"bindings": ["query"], "type": "string"}}
REGEX = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
BM25 = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


async def resolved(tmp_path: Path, internal_name: str = "take_note") -> Any:
    """Profile ``bot``: ``search`` up front; ``crm_lookup``, the server ``wiki`` deferred."""
    document = manifest_document([
        api_capability("search", "https://api.example.com/search", properties=QUERY,
                       arguments=ARGUMENTS),
        api_capability("crm_lookup", "https://api.example.com/crm", properties=QUERY,
                       arguments=ARGUMENTS),
        mcp_capability("wiki"), internal_capability("notes")])
    document["profiles"] = [{
        "name": "bot", "description": None,
        "capabilities": ["search", "crm_lookup", "wiki", "notes"],
        "deferred": ["crm_lookup", "wiki"], "budget": {},
        "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
    registry = ToolRegistry()

    def take_note(text: str) -> str:
        """Write a note."""
        return "noted"

    registry.register_tools("notes", [StructuredTool.from_function(take_note, name=internal_name)])
    manifest = load_manifest(path, registry=registry)
    async with manifest:
        return await manifest.resolve_profile("bot", RuntimeContext(settings=StaticSettings({})))


async def test_the_default_is_bm25_and_regex_replaces_it_in_a_new_toolset(tmp_path: Path) -> None:
    toolset = await resolved(tmp_path)
    regex = toolset.with_anthropic_search("regex")
    assert toolset.mcp("anthropic").tools[-1] == BM25
    entries = regex.mcp("anthropic").tools
    assert [entry for entry in entries if entry["type"].startswith("tool_search")] == [REGEX]
    for entry in entries:
        TypeAdapter(BetaToolUnionParam).validate_python(entry)
        assert unknown_keys(entry, BetaToolUnionParam) == []
    assert regex.with_anthropic_search("bm25").mcp("anthropic").tools == toolset.mcp(
        "anthropic").tools
    # OpenAI has one search tool, whatever Anthropic's is.
    assert regex.mcp("openai").tools == toolset.mcp("openai").tools
    assert regex.mcp("openai").tools[-1] == {"type": "tool_search"}


@pytest.mark.parametrize("make", ["ChatAnthropic", "init_chat_model"])
async def test_the_regex_search_reaches_the_wire(tmp_path: Path, make: str) -> None:
    toolset = (await resolved(tmp_path)).with_anthropic_search("regex")
    with provider_server([anthropic_text("ok")]) as provider:
        llm: Any = (
            ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                          base_url=provider.base_url, max_retries=0)
            if make == "ChatAnthropic" else
            init_chat_model("anthropic:claude-sonnet-4-5", api_key="sk-ant-test",
                            base_url=provider.base_url, max_retries=0,
                            configurable_fields=("temperature",)))
        model, tools = attach_mcp(llm, toolset)
        await model.bind_tools(tools).ainvoke("find Ada")
    (body,) = request_bodies(provider)
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
    assert unknown_keys(body, MessageCreateParamsNonStreaming) == []
    searches = [tool for tool in body["tools"] if tool.get("type", "").startswith("tool_search")]
    assert searches == [REGEX]
    assert {tool.get("name") or tool.get("mcp_server_name"): tool.get("defer_loading", False)
            or tool.get("default_config", {}).get("defer_loading", False)
            for tool in body["tools"]} == {
        "search": False, "crm_lookup": True, "take_note": False, "wiki": True,
        "tool_search_tool_regex": False}
    assert "advanced-tool-use" in (provider.last().header("anthropic-beta") or "")


async def test_a_bad_choice_is_refused_naming_the_choices(tmp_path: Path) -> None:
    toolset = await resolved(tmp_path)
    with pytest.raises(ValueError, match="unknown Anthropic tool search 'glob'; choose one of: "
                                         "bm25, regex"):
        toolset.with_anthropic_search("glob")
    plain = type(toolset)(toolset.tool_entries, ())
    with pytest.raises(ValueError, match="resolve_profile"):
        plain.with_anthropic_search("regex")


async def test_a_tool_named_like_the_regex_search_is_refused(tmp_path: Path) -> None:
    toolset = await resolved(tmp_path, internal_name="tool_search_tool_regex")
    with pytest.raises(ValueError, match="has a tool named 'tool_search_tool_regex'"):
        toolset.with_anthropic_search("regex")
    assert toolset.with_anthropic_search("bm25").mcp("anthropic").tools[-1] == BM25


def test_the_regex_entry_costs_no_more_than_the_bm25_one_the_budget_counts() -> None:
    """docs/profiles.md: the budget costs the BM25 entry, so choosing regex keeps it met."""
    from compiler.profiles.tokens import EncodingUnavailable, o200k

    try:
        count = o200k()
    except EncodingUnavailable:
        pytest.skip("the o200k encoding (capc[budget]) is not installed")
    assert count([json.dumps(entry, separators=(",", ":")) for entry in (BM25, REGEX)]) == [
        23, 19]
