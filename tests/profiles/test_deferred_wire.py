"""Deferred loading on the wire: a profile resolved at runtime, bound by ``create_agent`` on
the real langchain-openai (Responses API) and langchain-anthropic clients, against loopback
look-alikes of both APIs. Each recorded request validates against the SDK request types
with no unknown keys, carries ``defer_loading`` exactly on the deferred tools and servers,
and exactly one search tool."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from compiler.runtime import (
    RuntimeContext,
    StaticSettings,
    ToolRegistry,
    attach_mcp,
    load_manifest,
)
from compiler.runtime.errors import RuntimeLoaderError
from tests.support.agents import (
    anthropic_text,
    anthropic_tool_use,
    openai_function_call,
    openai_text,
    provider_server,
    request_bodies,
    unknown_keys,
)
from tests.support.runtime import (
    RecordingServer,
    api_capability,
    internal_capability,
    manifest_document,
    mcp_capability,
    seal,
)

OPENAI_REQUEST = TypeAdapter(ResponseCreateParamsNonStreaming)
ANTHROPIC_REQUEST = TypeAdapter(MessageCreateParamsNonStreaming)
QUESTION = {"messages": [{"role": "user", "content": "find tea"}]}
QUERY = {"q": {"type": "string", "description": "Search text"}}
ARGUMENTS = {"q": {"bindings": ["query"], "type": "string"}}


def write_profile_manifest(path: Path, base_url: str) -> Path:
    capabilities = [
        api_capability("search", base_url + "/search", properties=QUERY, arguments=ARGUMENTS,
                       required=["q"]),
        api_capability("crm_lookup", base_url + "/crm", properties=QUERY, arguments=ARGUMENTS),
        mcp_capability("deepwiki"),
        internal_capability("notes"),
    ]
    document = manifest_document(capabilities)
    document["profiles"] = [{
        "name": "support-bot", "description": "The support agent",
        "capabilities": ["search", "crm_lookup", "deepwiki", "notes"],
        "deferred": ["crm_lookup", "deepwiki"], "budget": {"tokens": 6000},
        "source": {"path": "capabilities/profiles.yaml", "line": 1},
    }]
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
    return path


def notes_tool() -> StructuredTool:
    def take_note(text: str) -> str:
        """Write a note."""
        return "noted"

    return StructuredTool.from_function(take_note, name="take_note")


async def profile_toolset(tmp_path: Path, api: RecordingServer) -> tuple[Any, Any, Any]:
    registry = ToolRegistry()
    registered = notes_tool()
    registry.register_tools("notes", [registered])
    manifest = load_manifest(write_profile_manifest(tmp_path / "m.json", api.base_url),
                             registry=registry, allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, group_id=2, chat_id=3, settings=StaticSettings({}))
    return manifest, await manifest.resolve_profile("support-bot", ctx), registered


async def test_profile_tools_carry_the_profile_and_deferred_ones_the_flag(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset, registered = await profile_toolset(tmp_path, server)
    async with manifest:
        assert manifest.profiles == ["support-bot"]
        assert toolset.profile == "support-bot"
        by_name = {tool.name: tool for tool in toolset.tools}
        assert sorted(by_name) == ["crm_lookup", "search", "take_note"]
        assert {name: tool.metadata["profile"] for name, tool in by_name.items()} == dict.fromkeys(
            by_name, "support-bot")
        assert {name: (tool.extras or {}).get("defer_loading") for name, tool in by_name.items()
                } == {"crm_lookup": True, "search": None, "take_note": None}
        # The registry's own tool is not changed for other resolves.
        assert registered.metadata is None and registered.extras is None
        plain = await manifest.resolve(["search"], RuntimeContext(settings=StaticSettings({})))
        assert plain.profile is None and plain.tools[0].extras is None
        assert plain.tools[0].metadata.get("profile") is None


async def test_an_unknown_profile_is_refused_with_the_known_names(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, _, _ = await profile_toolset(tmp_path, server)
    async with manifest:
        with pytest.raises(RuntimeLoaderError, match="support-bot"):
            await manifest.resolve_profile("no-such-bot", RuntimeContext())


async def test_openai_request_defers_the_tools_and_adds_one_tool_search(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset, _ = await profile_toolset(tmp_path, server)
    answers = [openai_function_call("search", {"q": "tea"}), openai_text("found it")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatOpenAI(model="gpt-5", api_key="sk-test", max_retries=0,
                               base_url=provider.base_url + "/v1", use_responses_api=True)
            model, tools = attach_mcp(model, toolset)
            result = await create_agent(model, tools).ainvoke(QUESTION)
    assert result["messages"][-1].text == "found it"
    assert [request.raw_path for request in server.received] == ["/search?q=tea"]
    bodies = request_bodies(provider)
    assert len(bodies) == 2
    for body in bodies:
        OPENAI_REQUEST.validate_python(body)
        assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []
        shown = {tool.get("name") or tool.get("server_label") or tool["type"]:
                 tool.get("defer_loading") for tool in body["tools"]}
        assert shown == {"search": None, "crm_lookup": True, "take_note": None,
                         "deepwiki": True, "tool_search": None}
        assert [tool["type"] for tool in body["tools"]].count("tool_search") == 1


async def test_anthropic_request_defers_tools_and_toolset_and_adds_the_bm25_search(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset, _ = await profile_toolset(tmp_path, server)
    answers = [anthropic_tool_use("search", {"q": "tea"}), anthropic_text("found it")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                                  base_url=provider.base_url, max_retries=0)
            model, tools = attach_mcp(model, toolset)
            result = await create_agent(model, tools).ainvoke(QUESTION)
    assert result["messages"][-1].text == "found it"
    bodies = request_bodies(provider)
    assert len(bodies) == 2
    for request, body in zip(provider.received, bodies, strict=True):
        ANTHROPIC_REQUEST.validate_python(body)
        assert unknown_keys(body, MessageCreateParamsNonStreaming) == []
        assert "mcp-client-2025-11-20" in (request.header("anthropic-beta") or "")
        by_name = {tool.get("name") or tool.get("mcp_server_name"): tool for tool in body["tools"]}
        assert {name: tool.get("defer_loading") for name, tool in by_name.items()
                if tool.get("type") in (None, "custom")} == {
            "search": None, "crm_lookup": True, "take_note": None}
        assert by_name["deepwiki"] == {"type": "mcp_toolset", "mcp_server_name": "deepwiki",
                                       "default_config": {"defer_loading": True}}
        assert by_name["tool_search_tool_bm25"] == {
            "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        assert [tool.get("type") for tool in body["tools"]].count(
            "tool_search_tool_bm25_20251119") == 1


async def test_a_provider_that_cannot_defer_says_so(
    server: RecordingServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manifest, toolset, _ = await profile_toolset(tmp_path, server)
    async with manifest:
        with caplog.at_level(logging.WARNING):
            config = toolset.mcp("langchain")
    assert [entry["name"] for entry in config.mcp_servers] == ["deepwiki"]
    assert "cannot defer loading" in caplog.text and "deepwiki" in caplog.text


async def test_deferred_function_tools_alone_still_get_the_search_tool(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset, _ = await profile_toolset(tmp_path, server)
    async with manifest:
        only_tools = type(toolset)(toolset.tool_entries, toolset.skipped,
                                   policy=toolset.policy)
        assert only_tools.mcp("openai").tools == [{"type": "tool_search"}]
        assert only_tools.mcp("anthropic").tools == [
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}]
        no_deferred = type(toolset)(tuple(t for t in toolset.tool_entries
                                          if t.name != "crm_lookup"), (), policy=toolset.policy)
        assert no_deferred.mcp("openai").tools == []
