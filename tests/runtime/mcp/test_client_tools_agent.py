"""A real LangGraph agent (scripted chat model) driving client-side MCP tools against the
real MCP server on 127.0.0.1: the model is bound the reviewed (overridden) descriptors, its
calls reach the server with the server's own arguments, and a refused approval stops one."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from tests.support.agents import ScriptedChatModel
from tests.support.pinning import Pinned, resolve


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


async def test_an_agent_is_shown_the_reviewed_tools_and_calls_the_server(
    pinned: Pinned,
) -> None:
    toolset = await resolve(pinned.manifest, ["calc"])
    client = await toolset.client_mcp_tools(timeout=10)
    model = ScriptedChatModel(script=[
        call("echo", {"text": "hello", "note": "model-only"}, "c1"),
        call("add", {"a": 2, "b": 3}, "c2"),
        AIMessage(content="done"),
    ])
    agent = create_agent(model, client.tools)
    result = await agent.ainvoke({"messages": [("user", "echo hello, then add 2 and 3")]})
    assert result["messages"][-1].content == "done"
    bound = {tool["function"]["name"]: tool["function"] for tool in model.bound_tools[0]}
    assert bound["echo"]["description"] == "Echo the text back (reviewed wording)."
    assert "note" in bound["echo"]["parameters"]["properties"]
    # echo reached the server without the override's extra argument.
    assert pinned.server.calls == [("echo", {"text": "hello"}), ("add", {"a": 2, "b": 3})]
    contents = [m.content for m in result["messages"] if m.type == "tool"]
    assert "hello" in str(contents[0]) and "5" in str(contents[1])


async def test_an_agent_cannot_run_a_refused_gated_tool(pinned: Pinned) -> None:
    asked: list[str] = []

    async def approve(tool_name: str, args: dict[str, Any]) -> bool:
        asked.append(tool_name)
        return False

    toolset = await resolve(pinned.manifest, ["gated"], approve=approve)
    client = await toolset.client_mcp_tools(timeout=10)
    model = ScriptedChatModel(script=[call("add", {"a": 1, "b": 1}, "c1"),
                                      AIMessage(content="gave up")])
    agent = create_agent(model, client.tools)
    result = await agent.ainvoke({"messages": [("user", "add 1 and 1")]})
    assert asked == ["add"] and pinned.server.calls == []
    tool_message = next(m for m in result["messages"] if m.type == "tool")
    assert "not approved" in str(tool_message.content)
