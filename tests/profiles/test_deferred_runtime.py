"""SPEC §12 deferred loading at runtime, on a manifest compiled from YAML.

``resolve_profile`` on a real tree; every provider dict validated against the installed
SDK request types (unknown keys included); the real chat clients (langchain-openai,
langchain-anthropic, ``init_chat_model``) against loopback look-alikes of the providers;
and the spec's "a profile with deferred tools but no provider support is a clear error or
warning, never a silent full load" on every path a user can take.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaToolUnionParam
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses import ToolParam
from pydantic import TypeAdapter, ValidationError

from compiler.runtime import (
    RuntimeContext,
    StaticSettings,
    ToolRegistry,
    attach_mcp,
    load_manifest,
)
from tests.support.agents import (
    ScriptedChatModel,
    anthropic_text,
    provider_server,
    request_bodies,
    unknown_keys,
)
from tests.support.trees import CRM, DEEPWIKI, WEATHER, compile_tree, write_tree

pytestmark = pytest.mark.independent

PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [get_weather, crm_*, deepwiki]
deferred: [crm_*, deepwiki]
---
apiVersion: capc/v1
kind: Profile
name: crm-bot
description: Deferred function tools only, no MCP server
capabilities: [get_weather, crm_*]
deferred: [crm_*]
"""
CHAT_COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
DEFERRED = {"crm_search", "crm_create"}


@pytest.fixture(scope="module")
def manifest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deferred")
    write_tree(root, WEATHER, CRM, DEEPWIKI, profiles=PROFILES)
    return compile_tree(root)


@pytest.fixture
async def toolsets(manifest_path: Path) -> AsyncIterator[dict[str, Any]]:
    manifest = load_manifest(manifest_path, registry=ToolRegistry())
    async with manifest:
        ctx = RuntimeContext(user_id=1, settings=StaticSettings({}))
        yield {name: await manifest.resolve_profile(name, ctx) for name in manifest.profiles}


async def test_profiles_are_listed_and_resolved_from_compiled_yaml(
    toolsets: dict[str, Any]
) -> None:
    assert sorted(toolsets) == ["crm-bot", "support-bot"]
    toolset = toolsets["support-bot"]
    assert {tool.name: (tool.extras or {}).get("defer_loading") for tool in toolset.tools} == {
        "get_weather": None, "crm_search": True, "crm_create": True}
    assert {tool.metadata["profile"] for tool in toolset.tools} == {"support-bot"}
    assert [server.entry.server_label for server in toolset.mcp_server_entries] == ["deepwiki"]


async def test_every_provider_entry_validates_against_the_sdk_types(
    toolsets: dict[str, Any]
) -> None:
    for toolset in toolsets.values():
        for entry in toolset.mcp("openai").tools:
            TypeAdapter(ToolParam).validate_python(entry)
            assert unknown_keys(entry, ToolParam) == []
        for entry in toolset.mcp("anthropic").tools:
            TypeAdapter(BetaToolUnionParam).validate_python(entry)
            assert unknown_keys(entry, BetaToolUnionParam) == []
    openai = toolsets["support-bot"].mcp("openai").tools
    assert [entry["type"] for entry in openai].count("tool_search") == 1
    assert next(e for e in openai if e["type"] == "mcp")["defer_loading"] is True
    anthropic = toolsets["support-bot"].mcp("anthropic").tools
    assert [entry["type"] for entry in anthropic].count("tool_search_tool_bm25_20251119") == 1


async def test_anthropic_through_init_chat_model_gets_the_search_tool(
    toolsets: dict[str, Any]
) -> None:
    """Deferred tools with no search tool are refused by the Messages API; ChatAnthropic
    itself gets the search tool, so must the same model made by ``init_chat_model``."""
    toolset = toolsets["crm-bot"]
    direct = init_chat_model("anthropic:claude-sonnet-4-5", api_key="sk-ant-test")
    configurable = init_chat_model("anthropic:claude-sonnet-4-5", api_key="sk-ant-test",
                                   configurable_fields=("temperature",))
    for model in (direct, configurable):
        _, tools = attach_mcp(model, toolset)
        types = [tool.get("type") for tool in tools if isinstance(tool, dict)]
        assert types == ["tool_search_tool_bm25_20251119"], type(model).__name__


async def test_anthropic_init_chat_model_request_carries_the_search_tool(
    toolsets: dict[str, Any]
) -> None:
    with provider_server([anthropic_text("ok")]) as provider:
        model = init_chat_model("anthropic:claude-sonnet-4-5", api_key="sk-ant-test",
                                base_url=provider.base_url, max_retries=0,
                                configurable_fields=("temperature",))
        model, tools = attach_mcp(model, toolsets["crm-bot"])
        await model.bind_tools(tools).ainvoke("find Ada")
    (body,) = request_bodies(provider)
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
    deferred = {tool["name"] for tool in body["tools"] if tool.get("defer_loading")}
    assert deferred == DEFERRED
    assert [tool.get("type") for tool in body["tools"]].count(
        "tool_search_tool_bm25_20251119") == 1


async def test_a_chat_model_that_cannot_defer_says_so_naming_the_tools(
    toolsets: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(script=[AIMessage(content="ok")])
    with caplog.at_level(logging.WARNING):
        _, tools = attach_mcp(model, toolsets["crm-bot"])
    assert {tool.name for tool in tools} == {"get_weather", *DEFERRED}
    warned = " ".join(record.getMessage() for record in caplog.records
                      if record.levelno >= logging.WARNING)
    assert "defer" in warned and all(name in warned for name in DEFERRED), warned


async def test_openai_chat_completions_cannot_defer_and_says_so(
    toolsets: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """``use_responses_api=False`` sends the Chat Completions API, which has neither
    ``defer_loading`` nor a ``tool_search`` tool: the request it would send is invalid for
    the SDK's own type. attach_mcp must refuse or warn, not hand it over silently."""
    with provider_server([CHAT_COMPLETION]) as provider:
        llm = ChatOpenAI(model="gpt-4o", api_key="sk-test", base_url=provider.base_url + "/v1",
                         use_responses_api=False, max_retries=0)
        try:
            with caplog.at_level(logging.WARNING):
                model, tools = attach_mcp(llm, toolsets["crm-bot"])
        except (TypeError, ValueError) as error:
            assert "use_responses_api" in str(error) or "Responses" in str(error)
            return
        await model.bind_tools(tools).ainvoke("find Ada")
    (body,) = request_bodies(provider)
    sent_is_valid = True
    try:
        TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(body)
    except ValidationError:
        sent_is_valid = False
    if sent_is_valid and not unknown_keys(body, CompletionCreateParamsNonStreaming):
        return
    warned = " ".join(record.getMessage() for record in caplog.records
                      if record.levelno >= logging.WARNING)
    assert "defer" in warned, f"an invalid Chat Completions request was sent silently: {body}"


MCP_PROFILE = """\
apiVersion: capc/v1
kind: Profile
name: wiki-bot
capabilities: [get_weather, calc]
deferred: [calc]
"""


async def test_client_side_tools_of_a_deferred_server_carry_the_flag(tmp_path: Path) -> None:
    from tests.support.mcp_server import running_mcp_server

    with running_mcp_server() as server:
        server_yaml = (
            "apiVersion: capc/v1\nkind: Capability\ncode: calc\nname: Calc\ntype: mcp\n"
            f"options:\n  server_label: calc\n  server_url: {server.url}\n"
            "  require_approval: never\n")
        write_tree(tmp_path, WEATHER, server_yaml, profiles=MCP_PROFILE)
        (tmp_path / "pyproject.toml").write_text("[tool.capc]\nallow_private_networks = true\n")
        manifest = load_manifest(compile_tree(tmp_path), registry=ToolRegistry(),
                                 allow_private_networks=True)
        async with manifest:
            toolset = await manifest.resolve_profile("wiki-bot", RuntimeContext(
                settings=StaticSettings({})))
            client = await toolset.client_mcp_tools(timeout=10)
    assert sorted(tool.name for tool in client.tools) == ["add", "echo"]
    assert {tool.metadata.get("profile") or tool.metadata.get("capc.profile")
            for tool in client.tools} == {"wiki-bot"}
    assert [(tool.extras or {}).get("defer_loading") for tool in client.tools] == [True, True]


@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
async def test_deferred_function_tools_alone_reach_the_wire_with_one_search_tool(
    toolsets: dict[str, Any], provider_name: str
) -> None:
    """A profile deferring function tools and no MCP server, through the real clients."""
    from langchain_anthropic import ChatAnthropic
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    from tests.support.agents import openai_text

    answer = openai_text("ok") if provider_name == "openai" else anthropic_text("ok")
    with provider_server([answer]) as provider:
        if provider_name == "openai":
            llm: Any = ChatOpenAI(model="gpt-5", api_key="sk-test", max_retries=0,
                                  base_url=provider.base_url + "/v1")
            request_type: Any = ResponseCreateParamsNonStreaming
            search = "tool_search"
        else:
            llm = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                                base_url=provider.base_url, max_retries=0)
            request_type = MessageCreateParamsNonStreaming
            search = "tool_search_tool_bm25_20251119"
        model, tools = attach_mcp(llm, toolsets["crm-bot"])
        await model.bind_tools(tools).ainvoke("find Ada")
    (body,) = request_bodies(provider)
    TypeAdapter(request_type).validate_python(body)
    assert unknown_keys(body, request_type) == []
    deferred = {tool.get("name") for tool in body["tools"] if tool.get("defer_loading")}
    assert deferred == DEFERRED
    assert [tool.get("type") for tool in body["tools"]].count(search) == 1
