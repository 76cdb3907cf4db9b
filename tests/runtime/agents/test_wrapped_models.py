"""``attach_mcp`` on wrapped models: bind, with_config, init_chat_model.

The real clients send to a loopback look-alike of their API; the MCP entries must be on
the wire, the wrapper's own settings too. A runnable capc cannot see into is refused with a
TypeError that says what to pass, and one that could not bind tools afterwards (with_retry,
with_fallbacks) with a TypeError that says the order that works (SPEC §9).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_anthropic import ChatAnthropic
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

from compiler.runtime import RuntimeContext, ToolRegistry, attach_mcp, load_manifest
from tests.support.agents import anthropic_text, openai_text, provider_server, request_bodies
from tests.support.runtime import RecordingServer, mcp_capability, write_manifest

QUESTION = {"messages": [{"role": "user", "content": "hello"}]}
MCP_OPENAI = {"type": "mcp", "server_label": "deepwiki",
              "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "never"}
MCP_SERVER = {"type": "url", "url": "https://mcp.deepwiki.com/mcp", "name": "deepwiki"}
MCP_TOOLSET = {"type": "mcp_toolset", "mcp_server_name": "deepwiki"}


async def mcp_toolset(tmp_path: Path) -> Any:
    path = write_manifest(tmp_path / "m.json", [mcp_capability("deepwiki")])
    manifest = load_manifest(path, registry=ToolRegistry())
    return await manifest.resolve(["deepwiki"], RuntimeContext(user_id=1))


def openai(provider: RecordingServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4.1", api_key="sk-test", base_url=provider.base_url + "/v1",
                      use_responses_api=True, max_retries=0)


def anthropic(provider: RecordingServer) -> ChatAnthropic:
    return ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                         base_url=provider.base_url, max_retries=0)


WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "bind": lambda model: model.bind(temperature=0.25),
    "with_config": lambda model: model.with_config(tags=["capc"]),
}
# What cannot take a tool list afterwards: attaching to it would lose the MCP entries.
UNBINDABLE: dict[str, Callable[[Any], Any]] = {
    "with_retry": lambda model: model.with_retry(stop_after_attempt=2),
    "bind_then_retry": lambda model: model.bind(temperature=0.25).with_retry(),
    "retry_then_bind": lambda model: model.with_retry().bind(temperature=0.25),
    "with_fallbacks": lambda model: model.with_fallbacks([model]),
}


async def run(model: Any, tools: list[Any], wrapper: str) -> None:
    await create_agent(model, tools).ainvoke(QUESTION)
    model.invoke("hello", tools=tools)  # the wrapper itself, with its own settings


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
async def test_a_wrapped_openai_model_sends_the_mcp_entry(tmp_path: Path, wrapper: str) -> None:
    toolset = await mcp_toolset(tmp_path)
    with provider_server([openai_text("hi")]) as provider:
        wrapped = WRAPPERS[wrapper](openai(provider))
        model, tools = attach_mcp(wrapped, toolset)
        assert model is wrapped and tools == [MCP_OPENAI]
        await run(model, tools, wrapper)
    bodies = request_bodies(provider)
    assert len(bodies) == 2
    for body in bodies:
        assert body["tools"] == [MCP_OPENAI]
    if "bind" in wrapper:
        assert bodies[1]["temperature"] == 0.25


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
async def test_a_wrapped_anthropic_model_carries_the_mcp_server(
    tmp_path: Path, wrapper: str
) -> None:
    toolset = await mcp_toolset(tmp_path)
    with provider_server([anthropic_text("hi")]) as provider:
        base = anthropic(provider)
        wrapped = WRAPPERS[wrapper](base)
        model, tools = attach_mcp(wrapped, toolset)
        assert type(model) is type(wrapped) and model is not wrapped
        assert base.mcp_servers is None  # the caller's model is left as it was
        assert tools == [MCP_TOOLSET]
        await run(model, tools, wrapper)
    agent_body, direct_body = request_bodies(provider)
    for body in (agent_body, direct_body):
        assert body["mcp_servers"] == [MCP_SERVER]
        assert body["tools"] == [MCP_TOOLSET]
    if "bind" in wrapper:
        assert direct_body["temperature"] == 0.25
    assert all("mcp-client-2025-11-20" in (request.header("anthropic-beta") or "")
               for request in provider.received)


async def test_init_chat_model_with_a_fixed_provider_is_attached(tmp_path: Path) -> None:
    toolset = await mcp_toolset(tmp_path)
    with provider_server([anthropic_text("hi")]) as anthropic_api, \
            provider_server([openai_text("hi")]) as openai_api:
        claude = init_chat_model(
            "anthropic:claude-sonnet-4-5", configurable_fields=("temperature",),
            api_key="sk-ant-test", base_url=anthropic_api.base_url)
        gpt = init_chat_model(
            "gpt-4.1", model_provider="openai", configurable_fields=("temperature",),
            api_key="sk-test", base_url=openai_api.base_url + "/v1", use_responses_api=True)
        claude_model, claude_tools = attach_mcp(claude, toolset)
        gpt_model, gpt_tools = attach_mcp(gpt, toolset)
        await create_agent(claude_model, claude_tools).ainvoke(
            QUESTION, config={"configurable": {"temperature": 0.5}})
        create_agent(gpt_model, gpt_tools).invoke(QUESTION)
    (claude_body,) = request_bodies(anthropic_api)
    assert claude_body["mcp_servers"] == [MCP_SERVER] and claude_body["tools"] == [MCP_TOOLSET]
    assert claude_body["temperature"] == 0.5
    (gpt_body,) = request_bodies(openai_api)
    assert gpt_body["tools"] == [MCP_OPENAI]


async def test_what_cannot_be_seen_into_is_refused_with_what_to_pass(tmp_path: Path) -> None:
    toolset = await mcp_toolset(tmp_path)
    model = ChatOpenAI(model="gpt-4.1", api_key="sk-test")
    refused = {
        "pipeline": RunnableLambda(lambda value: value) | model,
        "provider chosen at run time": init_chat_model(configurable_fields=("model",)),
        "any field configurable": init_chat_model("openai:gpt-4.1", configurable_fields="any"),
    }
    for label, runnable in refused.items():
        with pytest.raises(TypeError) as raised:
            attach_mcp(runnable, toolset)
        message = str(raised.value)
        assert "pass" in message and ("ChatOpenAI" in message or "init_chat_model" in message), (
            label, message)
    # Without MCP servers there is nothing to attach, so nothing to refuse.
    empty = await (load_manifest(write_manifest(tmp_path / "e.json", []),
                                 registry=ToolRegistry())).resolve([], RuntimeContext())
    fallback = model.with_fallbacks([model])
    assert attach_mcp(fallback, empty) == (fallback, [])


@pytest.mark.parametrize("wrapper", sorted(UNBINDABLE))
async def test_a_wrapper_that_cannot_bind_tools_afterwards_is_refused_with_the_order(
    tmp_path: Path, wrapper: str
) -> None:
    toolset = await mcp_toolset(tmp_path)
    with provider_server([openai_text("hi")]) as provider:
        for bare in (ChatOpenAI(model="gpt-4.1", api_key="sk-test"),
                     ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test")):
            with pytest.raises(TypeError) as raised:
                attach_mcp(UNBINDABLE[wrapper](bare), toolset)
            message = str(raised.value)
            assert "tools cannot be bound to it afterwards" in message, message
            assert ("attach_mcp on the bare or bound model, then bind tools, then wrap"
                    in message), message
        # The order the message names works: the entry reaches the wire through the wrapper.
        model, tools = attach_mcp(openai(provider), toolset)
        wrapped = model.bind_tools(tools).with_retry(stop_after_attempt=2)
        await wrapped.ainvoke("hello")
    (body,) = request_bodies(provider)
    assert body["tools"] == [MCP_OPENAI]
