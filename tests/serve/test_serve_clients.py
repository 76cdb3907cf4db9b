"""Real clients of a served manifest: langchain-mcp-adapters, a LangGraph agent with a
scripted model calling a served tool end to end, structured output (§16) read by the
official SDK client, and two replicas answering ``tools/list`` with the same bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool

from compiler.runtime import ToolRegistry
from compiler.runtime.serve import create_app
from tests.serve.support import post, profile, rpc, running, sdk_session, write_served_manifest
from tests.support.agents import ScriptedChatModel
from tests.support.runtime import RecordingServer, internal_capability

FORECAST_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                                     "celsius": {"type": "number"}},
                   "required": ["city", "celsius"]}
CITIES_SCHEMA = {"type": "array", "items": {"type": "string"}}


def app_for(manifest: Path, **options: Any) -> Any:
    return create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                      **options)


def test_langchain_mcp_adapters_and_an_agent_call_a_served_tool(
        weather_manifest: Path, upstream: RecordingServer) -> None:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    async def agent_run(url: str) -> tuple[list[str], Any, ScriptedChatModel]:
        client = MultiServerMCPClient({"capc": {"transport": "streamable_http", "url": url}})
        tools = await client.get_tools()
        model = ScriptedChatModel(script=[
            AIMessage(content="", tool_calls=[{"name": "get_weather", "id": "c1",
                                               "args": {"city": "Accra"}}]),
            AIMessage(content="It is fine in Accra."),
        ])
        agent = create_agent(model, tools)
        result = await agent.ainvoke({"messages": [("user", "Weather in Accra?")]})
        return sorted(tool.name for tool in tools), result, model

    with running(app_for(weather_manifest)) as server:
        names, result, model = asyncio.run(agent_run(server.url("/mcp/support")))
    assert names == ["create_ticket", "get_weather"]
    assert result["messages"][-1].content == "It is fine in Accra."
    bound = {tool["function"]["name"]: tool["function"] for tool in model.bound_tools[0]}
    assert bound["get_weather"]["parameters"]["properties"]["city"]["minLength"] == 1
    tool_message = next(message for message in result["messages"] if message.type == "tool")
    assert "city=Accra" in str(tool_message.content)
    assert [request.raw_path for request in upstream.received] == ["/weather?city=Accra"]


def forecast_registry() -> ToolRegistry:
    async def forecast(city: str) -> tuple[str, dict[str, Any]]:
        """Tomorrow's forecast."""
        value = {"city": city, "celsius": 21.5}
        return json.dumps(value), value

    async def cities(country: str) -> tuple[str, list[str]]:
        """The cities of a country."""
        return "Lyon, Nice", ["Lyon", "Nice"]

    registry = ToolRegistry()
    registry.register_tools("forecasts", [
        StructuredTool.from_function(coroutine=forecast, name="forecast",
                                     response_format="content_and_artifact",
                                     metadata={"output_schema": FORECAST_SCHEMA}),
        StructuredTool.from_function(coroutine=cities, name="cities",
                                     response_format="content_and_artifact",
                                     metadata={"output_schema": CITIES_SCHEMA})])
    return registry


def test_structured_output_reaches_the_official_client(tmp_path: Path) -> None:
    manifest = write_served_manifest(tmp_path / "m.json", [internal_capability("forecasts")],
                                     [profile("weather-desk", ["forecasts"])])
    app = create_app(manifest, registry=forecast_registry())

    async def work(url: str) -> tuple[Any, Any, Any]:
        async with sdk_session(url) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            forecast = await session.call_tool("forecast", {"city": "Oslo"})
            cities = await session.call_tool("cities", {"country": "FR"})
            return listed, forecast, cities

    with running(app) as server:
        listed, forecast, cities = asyncio.run(work(server.url("/mcp/weather-desk")))
    assert listed["forecast"].outputSchema == FORECAST_SCHEMA
    assert listed["cities"].outputSchema == {"type": "object", "properties": {
        "result": CITIES_SCHEMA}, "required": ["result"]}
    assert forecast.structuredContent == {"city": "Oslo", "celsius": 21.5}
    assert json.loads(forecast.content[0].text) == forecast.structuredContent
    assert cities.structuredContent == {"result": ["Lyon", "Nice"]}


def test_two_replicas_list_the_same_bytes(weather_manifest: Path) -> None:
    with running(app_for(weather_manifest)) as first, \
            running(app_for(weather_manifest)) as second:
        replies = [post(server.url("/mcp/support"), rpc("tools/list", request_id=7)).content
                   for server in (first, second, first)]
    assert replies[0] == replies[1] == replies[2]
    assert b"get_weather" in replies[0]


def test_images_reach_the_client_as_mcp_image_content(tmp_path: Path) -> None:
    async def chart(city: str) -> list[dict[str, str]]:
        """A chart of the week."""
        return [{"type": "text", "text": f"chart of {city}"},
                {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}]

    registry = ToolRegistry()
    registry.register_tools("charts", [StructuredTool.from_function(coroutine=chart,
                                                                    name="chart")])
    manifest = write_served_manifest(tmp_path / "m.json", [internal_capability("charts")],
                                     [profile("weather-desk", ["charts"])])

    async def work(url: str) -> Any:
        async with sdk_session(url) as session:
            return await session.call_tool("chart", {"city": "Oslo"})

    with running(create_app(manifest, registry=registry)) as server:
        result = asyncio.run(work(server.url("/mcp/weather-desk")))
    assert [block.type for block in result.content] == ["text", "image"]
    assert result.content[1].data == "iVBORw0KGgo=" and result.content[1].mimeType == "image/png"
