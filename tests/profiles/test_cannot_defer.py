"""Where a model cannot defer, the result says so (issue 24, SPEC §12): a chat model other
than ChatOpenAI (Responses API) and ChatAnthropic, and ChatOpenAI on Chat Completions, get
the deferred tools in full, without the flag they would refuse, with a warning naming them,
or ProfileOverBudget when that puts more tools up front than the profile's budget. Nothing
is said when nothing is deferred and no server is dropped. Requests are recorded on a
loopback look-alike of the provider and validated against the SDK's request type."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from pydantic import TypeAdapter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, attach_mcp, load_manifest
from compiler.runtime.loading_policy import ProfileOverBudget
from tests.support.agents import ScriptedChatModel, provider_server, request_bodies, unknown_keys
from tests.support.runtime import api_capability, manifest_document, mcp_capability, seal

QUERY = {"q": {"type": "string", "description": "Search text"}}
ARGUMENTS = {"q": {"bindings": ["query"], "type": "string"}}
CHAT_COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


async def resolved(tmp_path: Path, *, deferred: list[str], budget: dict[str, int],
                   codes: tuple[str, ...] = ("search", "crm_lookup", "crm_create", "wiki")
                   ) -> Any:
    """The toolset of profile ``bot`` over ``codes`` (three api tools and an MCP server)."""
    capabilities = [api_capability(code, f"https://api.example.com/{code}", properties=QUERY,
                                   arguments=ARGUMENTS)
                    for code in ("search", "crm_lookup", "crm_create")]
    document = manifest_document([*capabilities, mcp_capability("wiki")])
    document["profiles"] = [{"name": "bot", "description": None, "capabilities": list(codes),
                             "deferred": deferred, "budget": budget,
                             "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
    manifest = load_manifest(path, registry=ToolRegistry())
    async with manifest:
        return await manifest.resolve_profile("bot", RuntimeContext(settings=StaticSettings({})))


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]


def flags(tools: list[Any]) -> dict[str, Any]:
    return {tool.name: (tool.extras or {}).get("defer_loading") for tool in tools}


async def test_another_chat_model_gets_the_deferred_tools_in_full_and_is_told_which(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    toolset = await resolved(tmp_path, deferred=["crm_lookup", "crm_create", "wiki"],
                             budget={"tools": 3, "tokens": 5000})
    model = ScriptedChatModel(script=[AIMessage(content="ok")])
    with caplog.at_level(logging.WARNING):
        attached, tools = attach_mcp(model, toolset)
        await attached.bind_tools(tools).ainvoke("find Ada")
    assert attached is model
    assert flags(tools) == {"search": None, "crm_lookup": None, "crm_create": None}
    # What the model was handed carries no flag either; the toolset keeps its own.
    (bound,) = model.bound_tools
    assert ["defer_loading" in json.dumps(tool) for tool in bound] == [False] * 3
    assert flags(toolset.tools)["crm_lookup"] is True
    servers, deferral = warnings_of(caplog)
    assert "MCP servers wiki not attached" in servers and "ScriptedChatModel" in servers
    assert "deferred tools crm_lookup, crm_create are sent in full (3 tools up front" in deferral
    assert "token budget (5000) is not checked at runtime" in deferral


@pytest.mark.parametrize("budget", [{"tools": 2}, {"tools": 1, "tokens": 99999}])
async def test_loading_in_full_past_the_tools_budget_is_an_error(
    tmp_path: Path, budget: dict[str, int]
) -> None:
    toolset = await resolved(tmp_path, deferred=["crm_lookup", "crm_create"], budget=budget)
    for model in (ScriptedChatModel(script=[]),
                  ChatOpenAI(model="gpt-4o", api_key="sk-test", use_responses_api=False)):
        with pytest.raises(ProfileOverBudget) as raised:
            attach_mcp(model, toolset)
        message = str(raised.value)
        assert f"3 tools up front, over the profile's budget of {budget['tools']}" in message
        assert "profile bot" in message and "crm_lookup, crm_create" in message


async def test_nothing_is_said_when_nothing_is_deferred_or_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    toolset = await resolved(tmp_path, deferred=[], budget={"tools": 1},
                             codes=("search", "crm_lookup"))
    with caplog.at_level(logging.WARNING):
        for model in (ScriptedChatModel(script=[]),
                      ChatOpenAI(model="gpt-4o", api_key="sk-test", use_responses_api=False)):
            _, tools = attach_mcp(model, toolset)
            assert [tool.name for tool in tools] == ["search", "crm_lookup"]
    # Over the tools budget as resolved: that is the compiler's verdict, not a deferral's.
    assert warnings_of(caplog) == []


async def test_chat_completions_get_a_valid_request_with_the_tools_in_full(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    toolset = await resolved(tmp_path, deferred=["crm_lookup", "wiki"], budget={})
    with provider_server([CHAT_COMPLETION]) as provider:
        llm = ChatOpenAI(model="gpt-4o", api_key="sk-test", base_url=provider.base_url + "/v1",
                         use_responses_api=False, max_retries=0)
        with caplog.at_level(logging.WARNING):
            model, tools = attach_mcp(llm, toolset)
        await model.bind_tools(tools).ainvoke("find Ada")
    (body,) = request_bodies(provider)
    assert provider.received[0].path.endswith("/chat/completions")
    TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(body)
    assert unknown_keys(body, CompletionCreateParamsNonStreaming) == []
    assert [tool["function"]["name"] for tool in body["tools"]] == [
        "search", "crm_lookup", "crm_create"]
    warned = " ".join(warnings_of(caplog))
    assert "MCP servers wiki not attached" in warned
    assert "deferred tools crm_lookup are sent in full" in warned
    assert "use_responses_api=True" in warned


async def test_init_chat_model_on_chat_completions_follows_the_same_rule(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    toolset = await resolved(tmp_path, deferred=["crm_lookup"], budget={})
    fixed = init_chat_model("openai:gpt-4o", api_key="sk-test", use_responses_api=False,
                            configurable_fields=("temperature",))
    with caplog.at_level(logging.WARNING):
        model, tools = attach_mcp(fixed, toolset)
    assert model is fixed
    assert flags(tools) == {"search": None, "crm_lookup": None, "crm_create": None}
    assert "deferred tools crm_lookup are sent in full" in " ".join(warnings_of(caplog))
    either = init_chat_model("openai:gpt-4o", api_key="sk-test",
                             configurable_fields=("use_responses_api",))
    with pytest.raises(TypeError, match="use_responses_api is configurable"):
        attach_mcp(either, toolset)


async def test_a_provider_without_mcp_support_says_the_servers_are_not_offered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    toolset = await resolved(tmp_path, deferred=["wiki"], budget={})
    with caplog.at_level(logging.WARNING):
        config = toolset.mcp("bedrock")
    assert config.tools == [] and config.mcp_servers == []
    warned = " ".join(warnings_of(caplog))
    assert "deferred MCP servers wiki are not offered at all" in warned
    assert "in full" not in warned
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        config = toolset.mcp("langchain")
    assert [entry["name"] for entry in config.mcp_servers] == ["wiki"]
    assert "deferred MCP servers wiki are offered in full" in " ".join(warnings_of(caplog))


async def test_chat_completions_never_get_mcp_entries_with_or_without_a_profile(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    profiled = await resolved(tmp_path, deferred=[], budget={}, codes=("search", "wiki"))
    plain = type(profiled)(profiled.tool_entries, (), profiled.mcp_server_entries)
    assert plain.policy is None and [s.code for s in plain.mcp_server_entries] == ["wiki"]
    llm = ChatOpenAI(model="gpt-4o", api_key="sk-test", use_responses_api=False)
    for toolset in (profiled, plain):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            _, tools = attach_mcp(llm, toolset)
        assert [tool.name for tool in tools] == ["search"]
        (warned,) = warnings_of(caplog)
        assert "MCP servers wiki not attached" in warned and "use_responses_api=True" in warned
    # The Responses API takes them.
    _, tools = attach_mcp(ChatOpenAI(model="gpt-4o", api_key="sk-test"), plain)
    assert [getattr(tool, "name", None) or tool["type"] for tool in tools] == ["search", "mcp"]
