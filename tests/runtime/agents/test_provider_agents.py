"""LangGraph agents on the real OpenAI (Responses API) and Anthropic clients, against
loopback look-alikes of both APIs: sync and async runs call the capc tool, the MCP entries
reach the wire, and every recorded provider request validates against the SDK's types."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
)
from pydantic import TypeAdapter

from compiler.runtime import (
    RuntimeContext,
    StaticSettings,
    ToolRegistry,
    attach_mcp,
    load_manifest,
)
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
    mcp_capability,
    write_manifest,
)

OPENAI_REQUEST = TypeAdapter(ResponseCreateParamsNonStreaming)
ANTHROPIC_REQUEST = TypeAdapter(MessageCreateParamsNonStreaming)
QUESTION = {"messages": [{"role": "user", "content": "find tea"}]}


def capabilities(base_url: str) -> list[dict[str, Any]]:
    return [
        api_capability(
            "search", base_url + "/search",
            properties={"q": {"type": "string", "description": "Search text"},
                        "config": {"type": "string", "description": "A reserved name"}},
            arguments={"q": {"bindings": ["query"], "type": "string"},
                       "config": {"bindings": ["query"], "type": "string"}},
            required=["q"], headers={"Authorization": "Bearer ${TOKEN}"},
            placeholders=["TOKEN"],
        ),
        mcp_capability("deepwiki"),
    ]


async def toolset_for(tmp_path: Path, api: RecordingServer) -> tuple[Any, Any]:
    path = write_manifest(tmp_path / "m.json", capabilities(api.base_url))
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, group_id=2, chat_id=3,
                         settings=StaticSettings({"TOKEN": "agent-secret"}))
    return manifest, await manifest.resolve(["search", "deepwiki"], ctx)


def openai_model(provider: RecordingServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4.1", api_key="sk-test", base_url=provider.base_url + "/v1",
                      use_responses_api=True, max_retries=0)


def anthropic_model(provider: RecordingServer) -> ChatAnthropic:
    return ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                         base_url=provider.base_url, max_retries=0)


def check_openai(body: dict[str, Any]) -> None:
    OPENAI_REQUEST.validate_python(body)
    assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []


def check_anthropic(body: dict[str, Any]) -> None:
    ANTHROPIC_REQUEST.validate_python(body)
    assert unknown_keys(body, MessageCreateParamsNonStreaming) == []


def run(agent: Any, mode: str) -> Any:
    return agent.invoke(QUESTION) if mode == "sync" else agent.ainvoke(QUESTION)


AGENTS: dict[str, Callable[[Any, list[Any]], Any]] = {
    "create_agent": lambda model, tools: create_agent(model, tools),
    "create_react_agent": lambda model, tools: create_react_agent(model, tools),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("factory", sorted(AGENTS))
async def test_openai_agent_calls_the_tool_and_sends_the_mcp_entry(
    server: RecordingServer, tmp_path: Path, mode: str, factory: str
) -> None:
    manifest, toolset = await toolset_for(tmp_path, server)
    answers = [openai_function_call("search", {"q": "tea", "config": "strict"}),
               openai_text("found it")]
    async with manifest:
        with provider_server(answers) as provider:
            model, tools = attach_mcp(openai_model(provider), toolset)
            agent = AGENTS[factory](model, tools)
            result = run(agent, mode)
            result = await result if mode == "async" else result
    assert result["messages"][-1].text == "found it"
    assert [request.raw_path for request in server.received] == ["/search?config=strict&q=tea"]
    assert server.last().header("Authorization") == "Bearer agent-secret"
    tool_message = result["messages"][2]
    assert tool_message.content == '{"ok": true}' and tool_message.status == "success"
    bodies = request_bodies(provider)
    assert [request.path for request in provider.received] == ["/v1/responses"] * 2
    for body in bodies:
        check_openai(body)
        function, mcp = body["tools"]
        assert function["name"] == "search"
        assert sorted(function["parameters"]["properties"]) == ["config", "q"]
        assert mcp == {"type": "mcp", "server_label": "deepwiki",
                       "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "never"}
    outputs = [item for item in bodies[1]["input"] if item.get("type") == "function_call_output"]
    assert outputs == [{"type": "function_call_output", "call_id": "call_1",
                        "output": '{"ok": true}'}]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("factory", sorted(AGENTS))
async def test_anthropic_agent_calls_the_tool_and_sends_the_mcp_server(
    server: RecordingServer, tmp_path: Path, mode: str, factory: str
) -> None:
    manifest, toolset = await toolset_for(tmp_path, server)
    answers = [anthropic_tool_use("search", {"q": "tea", "config": "strict"}),
               anthropic_text("found it")]
    async with manifest:
        with provider_server(answers) as provider:
            model, tools = attach_mcp(anthropic_model(provider), toolset)
            agent = AGENTS[factory](model, tools)
            result = run(agent, mode)
            result = await result if mode == "async" else result
    assert result["messages"][-1].text == "found it"
    assert [request.raw_path for request in server.received] == ["/search?config=strict&q=tea"]
    bodies = request_bodies(provider)
    assert len(bodies) == 2
    for request, body in zip(provider.received, bodies, strict=True):
        check_anthropic(body)
        assert request.path == "/v1/messages"
        assert "mcp-client-2025-11-20" in (request.header("anthropic-beta") or "")
        assert body["mcp_servers"] == [{"type": "url", "url": "https://mcp.deepwiki.com/mcp",
                                        "name": "deepwiki"}]
        function, toolset_entry = body["tools"]
        assert function["name"] == "search"
        assert sorted(function["input_schema"]["properties"]) == ["config", "q"]
        assert toolset_entry == {"type": "mcp_toolset", "mcp_server_name": "deepwiki"}
    results = [block for message in bodies[1]["messages"] if isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result"]
    assert [(block["tool_use_id"], block["content"]) for block in results] == [
        ("toolu_1", '{"ok": true}')]


def test_the_strict_key_check_finds_a_nested_unknown_key() -> None:
    body = {"model": "m", "max_tokens": 1, "messages": [],
            "mcp_servers": [{"type": "url", "url": "https://x", "name": "x", "headers": {}}]}
    ANTHROPIC_REQUEST.validate_python(body)
    assert unknown_keys(body, MessageCreateParamsNonStreaming) == ["$.mcp_servers[0].headers"]
    assert json.dumps(body)  # the body itself stays serialisable
