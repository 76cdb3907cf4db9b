"""Client-side MCP tools of a profile (``Toolset.client_mcp_tools``) against a real MCP
server on 127.0.0.1: the tools of a deferred server carry ``defer_loading`` in ``extras``,
those of a server sent up front do not, and every one carries the profile's name."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, attach_mcp, load_manifest
from tests.support.agents import (
    ScriptedChatModel,
    openai_text,
    provider_server,
    request_bodies,
    unknown_keys,
)
from tests.support.mcp_server import running_mcp_server
from tests.support.runtime import manifest_document, mcp_capability, seal


async def test_the_flag_follows_each_server_code(tmp_path: Path) -> None:
    with running_mcp_server() as server:
        # Two capabilities on one server, each allowed one of its tools.
        document = manifest_document([
            mcp_capability("adder", server_label="adder", server_url=server.url,
                           allowed_tools=["add"]),
            mcp_capability("echoer", server_label="echoer", server_url=server.url,
                           allowed_tools=["echo"])])
        document["profiles"] = [{
            "name": "wiki-bot", "description": None, "capabilities": ["adder", "echoer"],
            "deferred": ["adder"], "budget": {},
            "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
        path = tmp_path / "manifest.json"
        path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
        manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
        async with manifest:
            toolset = await manifest.resolve_profile(
                "wiki-bot", RuntimeContext(settings=StaticSettings({})))
            client = await toolset.client_mcp_tools(timeout=10)
            plain = await (await manifest.resolve(
                ["adder"], RuntimeContext(settings=StaticSettings({})))).client_mcp_tools(
                    timeout=10)
    assert {tool.name: (tool.extras or {}).get("defer_loading") for tool in client.tools} == {
        "add": True, "echo": None}
    assert {tool.metadata["profile"] for tool in client.tools} == {"wiki-bot"}
    # Without a profile nothing is deferred.
    assert [(tool.name, (tool.extras or {}).get("defer_loading")) for tool in plain.tools] == [
        ("add", None)]


async def test_client_tools_of_a_deferred_server_reach_the_wire_with_the_search_tool(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``attach_mcp(llm, toolset.with_client_tools(client))``: the deferred client tools go
    with one ``tool_search`` on OpenAI and no hosted ``mcp`` entry; a model that cannot
    defer gets them in full, named in a warning."""
    with running_mcp_server() as server:
        document = manifest_document([mcp_capability("calc", server_label="calc",
                                                     server_url=server.url)])
        document["profiles"] = [{
            "name": "wiki-bot", "description": None, "capabilities": ["calc"],
            "deferred": ["calc"], "budget": {},
            "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
        path = tmp_path / "manifest.json"
        path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
        manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
        async with manifest:
            toolset = await manifest.resolve_profile(
                "wiki-bot", RuntimeContext(settings=StaticSettings({})))
            served = toolset.with_client_tools(await toolset.client_mcp_tools(timeout=10))
    with provider_server([openai_text("ok")]) as provider:
        llm = ChatOpenAI(model="gpt-5", api_key="sk-test", max_retries=0,
                         base_url=provider.base_url + "/v1")
        model, tools = attach_mcp(llm, served)
        await model.bind_tools(tools).ainvoke("add 1 and 2")
    (body,) = request_bodies(provider)
    TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(body)
    assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []
    assert [(tool["type"], tool.get("name"), tool.get("defer_loading"))
            for tool in body["tools"]] == [
        ("function", "add", True), ("function", "echo", True), ("tool_search", None, None)]
    with caplog.at_level(logging.WARNING):
        _, in_full = attach_mcp(ScriptedChatModel(script=[]), served)
    assert [(tool.name, tool.extras) for tool in in_full] == [("add", None), ("echo", None)]
    assert "deferred tools add, echo are sent in full" in caplog.text
    assert "not attached" not in caplog.text  # the servers are served client side
