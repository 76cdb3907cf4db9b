"""Nested and strict tools on every provider (SPEC §10).

Every api tool of the shipped tree and of the nested-shapes case, as langchain-openai and
langchain-anthropic bind it, validates against the installed SDK's own types, plain and
strict (every tool a provider's strict mode can take is shown in strict form); a strict
tool reaches the real clients' wire with ``strict: true``; LangGraph agents call a
nested-argument tool sync and async.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import ToolParam
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.tools.strict import provider_tools, strict_problems
from tests.support.agents import (
    ScriptedChatModel,
    anthropic_text,
    anthropic_tool_use,
    openai_function_call,
    openai_text,
    provider_server,
    request_bodies,
    tool_call,
    unknown_keys,
)
from tests.support.paths import REPO_ROOT
from tests.support.runtime import DocumentStore, RecordingServer, seal
from tests.support.structured import SHIPPED_SETTINGS, compile_yaml, shipped_manifest

OPENAI_TOOL = TypeAdapter(ChatCompletionFunctionToolParam)
ANTHROPIC_TOOL = TypeAdapter(ToolParam)
NESTED_CASE = REPO_ROOT / "tests" / "cases" / "good" / "api-structured" / "src" / "issues.yaml"


def manifest_documents(tmp_path: Path) -> list[dict[str, Any]]:
    shipped = json.loads(shipped_manifest(tmp_path).read_text())
    nested = compile_yaml(tmp_path / "nested", NESTED_CASE.read_text())
    return [shipped, nested]


def strict_everywhere(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with ``strict`` on for every api tool both providers can take strictly."""
    for capability in document["capabilities"]:
        tool = capability.get("tool")
        if tool is not None and not strict_problems(tool["input_schema"]):
            tool["strict"] = True
    return seal({key: value for key, value in document.items() if key != "digest"})


async def api_tools(tmp_path: Path, document: dict[str, Any], name: str) -> list[Any]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document, sort_keys=True, indent=2) + "\n")
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    codes = [c["code"] for c in document["capabilities"] if c["type"] == "api"]
    ctx = RuntimeContext(user_id=1, chat_id=3, settings=StaticSettings(SHIPPED_SETTINGS),
                         documents=DocumentStore())
    toolset = await manifest.resolve(codes, ctx)
    assert toolset.skipped == (), toolset.skipped
    return list(toolset.tools)


def closed_and_all_required(schema: Mapping[str, Any], where: str = "$") -> list[str]:
    """Where a strict-form schema breaks OpenAI's strict rules (empty: nowhere)."""
    problems = []
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            problems.append(f"{where}: not closed")
        if list(schema.get("required", [])) != list(schema.get("properties", {})):
            problems.append(f"{where}: not every property required")
    for name, child in (schema.get("properties") or {}).items():
        problems += closed_and_all_required(child, f"{where}.{name}")
    if isinstance(schema.get("items"), Mapping):
        problems += closed_and_all_required(schema["items"], f"{where}[]")
    return problems


@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
async def test_every_tool_binds_to_both_providers_as_their_sdk_types(
        tmp_path: Path, strict: bool) -> None:
    checked = strict_count = 0
    for index, document in enumerate(manifest_documents(tmp_path)):
        if strict:
            document = strict_everywhere(document)
        tools = await api_tools(tmp_path, document, f"m{index}")
        openai_bound = ChatOpenAI(model="gpt-4.1", api_key="sk-test").bind_tools(
            provider_tools(tools, "openai")).kwargs["tools"]
        anthropic_bound = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test"
                                        ).bind_tools(provider_tools(tools, "anthropic")
                                                     ).kwargs["tools"]
        assert len(openai_bound) == len(anthropic_bound) == len(tools)
        for tool, as_openai, as_anthropic in zip(tools, openai_bound, anthropic_bound,
                                                  strict=True):
            OPENAI_TOOL.validate_python(as_openai)
            assert unknown_keys(as_openai, ChatCompletionFunctionToolParam) == []
            ANTHROPIC_TOOL.validate_python(as_anthropic)
            assert unknown_keys(as_anthropic, ToolParam) == []
            is_strict = bool(tool.metadata.get("strict"))
            assert as_openai["function"].get("strict", False) is is_strict
            assert as_anthropic.get("strict", False) is is_strict
            if is_strict:
                strict_count += 1
                assert closed_and_all_required(as_openai["function"]["parameters"]) == []
                assert as_anthropic["input_schema"] == as_openai["function"]["parameters"]
            checked += 1
    assert checked >= 14
    # add_labels is strict as shipped; in strict mode every closed schema is.
    assert strict_count >= (10 if strict else 1)


STRICT_CALL = {"owner": "acme", "repo": "app", "number": 7, "labels": ["bug"], "reason": None}


async def strict_toolset(tmp_path: Path, server: RecordingServer) -> tuple[Any, Any]:
    manifest = load_manifest(shipped_manifest(tmp_path, server.base_url),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings(SHIPPED_SETTINGS))
    return manifest, await manifest.resolve(["add_labels"], ctx)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_strict_tool_runs_end_to_end_on_openai(
        server: RecordingServer, tmp_path: Path, mode: str) -> None:
    manifest, toolset = await strict_toolset(tmp_path, server)
    answers = [openai_function_call("add_labels", STRICT_CALL), openai_text("done")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatOpenAI(model="gpt-4.1", api_key="sk-test", max_retries=0,
                               base_url=provider.base_url + "/v1", use_responses_api=True)
            agent = create_react_agent(
                model.bind_tools(provider_tools(toolset.tools, "openai")), toolset.tools)
            question = {"messages": [{"role": "user", "content": "label it"}]}
            result = (agent.invoke(question) if mode == "sync"
                      else await agent.ainvoke(question))
    assert result["messages"][-1].text == "done"
    assert server.last().body == b'{"labels":["bug"]}'
    for body in request_bodies(provider):
        TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(body)
        assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []
        (function,) = body["tools"]
        assert function["strict"] is True
        assert function["parameters"]["properties"]["reason"]["type"] == ["string", "null"]
        assert closed_and_all_required(function["parameters"]) == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_strict_tool_runs_end_to_end_on_anthropic(
        server: RecordingServer, tmp_path: Path, mode: str) -> None:
    manifest, toolset = await strict_toolset(tmp_path, server)
    answers = [anthropic_tool_use("add_labels", STRICT_CALL), anthropic_text("done")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                                  base_url=provider.base_url, max_retries=0)
            agent = create_react_agent(
                model.bind_tools(provider_tools(toolset.tools, "anthropic")), toolset.tools)
            question = {"messages": [{"role": "user", "content": "label it"}]}
            result = (agent.invoke(question) if mode == "sync"
                      else await agent.ainvoke(question))
    assert result["messages"][-1].text == "done"
    assert server.last().body == b'{"labels":["bug"]}'
    for body in request_bodies(provider):
        TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
        assert unknown_keys(body, MessageCreateParamsNonStreaming) == []
        (tool,) = body["tools"]
        assert tool["strict"] is True and tool["name"] == "add_labels"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_langgraph_agent_calls_a_nested_argument_tool(
        server: RecordingServer, tmp_path: Path, mode: str) -> None:
    manifest = load_manifest(shipped_manifest(tmp_path, server.base_url),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings(SHIPPED_SETTINGS))
    arguments = {"line_items": [{"price": "price_1", "quantity": 3}],
                 "metadata": {"order": "42"}}
    model = ScriptedChatModel(script=[tool_call("create_checkout", arguments),
                                      tool_call("create_checkout", {"line_items": [{}]}, "c2"),
                                      AIMessage(content="done", id="final")])
    async with manifest:
        toolset = await manifest.resolve(["create_checkout"], ctx)
        agent = create_react_agent(model, toolset.tools)
        question = {"messages": [{"role": "user", "content": "buy"}]}
        result = agent.invoke(question) if mode == "sync" else await agent.ainvoke(question)
    first, second = [m for m in result["messages"] if m.type == "tool"]
    assert first.status == "success"
    assert second.status == "error" and "line_items[0].price:" in second.content
    assert [r.body for r in server.received] == [
        b"line_items[0][price]=price_1&line_items[0][quantity]=3&metadata[order]=42"
        b"&mode=payment"]
    (schema,) = model.bound_tools[0]
    items = schema["function"]["parameters"]["properties"]["line_items"]["items"]
    assert items["properties"]["price"]["description"] == "The price id"
