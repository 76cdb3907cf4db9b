"""``capc serve`` over streamable HTTP with a real uvicorn on 127.0.0.1: what is listed,
what a call sends upstream, and what the official SDK client sees."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from compiler.runtime import ToolRegistry, load_manifest
from compiler.runtime.serve import create_app
from tests.serve.support import post, rpc, running, sdk_session
from tests.support.runtime import RecordingServer


def app_for(manifest: Path, **options: object) -> object:
    return create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                      **options)  # type: ignore[arg-type]


def test_a_profile_lists_its_reviewed_tools_exactly(weather_manifest: Path) -> None:
    reviewed = json.loads(weather_manifest.read_text())
    schemas = {entry["tool"]["name"]: entry["tool"]["input_schema"]
               for entry in reviewed["capabilities"]}
    with running(app_for(weather_manifest)) as server:
        reply = post(server.url("/mcp/support"), rpc("tools/list"))
    assert reply.status_code == 200
    tools = reply.json()["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["create_ticket", "get_weather"]
    for tool in tools:
        # Byte-equal to the reviewed schema (key order included), not pydantic's rendering.
        shown = json.dumps(tool["inputSchema"])
        assert shown == json.dumps(schemas[tool["name"]])
        assert tool["_meta"]["capc/capability"] == tool["name"]
        assert tool["_meta"]["capc/manifest_digest"] == reviewed["digest"]
        assert tool["_meta"]["capc/profile"] == "support"
    weather, ticket = tools[1], tools[0]
    assert weather["annotations"] == {"readOnlyHint": True, "destructiveHint": False,
                                      "idempotentHint": True, "openWorldHint": True}
    assert ticket["annotations"]["readOnlyHint"] is False
    assert ticket["annotations"]["idempotentHint"] is False


def test_a_call_reaches_the_upstream_and_its_reply_comes_back(
        weather_manifest: Path, upstream: RecordingServer) -> None:
    with running(app_for(weather_manifest)) as server:
        reply = post(server.url("/mcp/support"),
                     rpc("tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}))
    result = reply.json()["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["query"] == "city=Oslo"
    assert [request.raw_path for request in upstream.received] == ["/weather?city=Oslo"]


def test_bad_arguments_and_other_profiles_tools_run_nothing(
        weather_manifest: Path, upstream: RecordingServer) -> None:
    with running(app_for(weather_manifest)) as server:
        url = server.url("/mcp/support")
        invalid = post(url, rpc("tools/call", {"name": "get_weather",
                                               "arguments": {"city": 7}})).json()
        missing = post(url, rpc("tools/call", {"name": "get_weather",
                                               "arguments": {}})).json()
        other = post(url, rpc("tools/call", {"name": "admin_reset", "arguments": {}})).json()
        unknown = post(url, rpc("tools/call", {"name": "rm_rf", "arguments": {}})).json()
    assert invalid["result"]["isError"] is True
    assert "invalid arguments" in invalid["result"]["content"][0]["text"]
    assert missing["result"]["isError"] is True
    assert other["error"]["code"] == -32602 and "admin_reset" in other["error"]["message"]
    assert unknown["error"]["code"] == -32602
    assert upstream.received == []


def test_only_the_profiles_asked_for_are_served(weather_manifest: Path) -> None:
    with running(app_for(weather_manifest, profiles=["admin"])) as server:
        admin = post(server.url("/mcp/admin"), rpc("tools/list")).json()
        assert post(server.url("/mcp/support"), rpc("tools/list")).status_code == 404
        assert post(server.url("/mcp"), rpc("tools/list")).status_code == 404
    assert [tool["name"] for tool in admin["result"]["tools"]] == ["admin_reset"]
    assert admin["result"]["tools"][0]["annotations"]["destructiveHint"] is True


def test_the_whole_manifest_is_served_only_when_asked(weather_manifest: Path) -> None:
    with running(app_for(weather_manifest, all_tools=True)) as server:
        everything = post(server.url("/mcp"), rpc("tools/list")).json()
    assert [tool["name"] for tool in everything["result"]["tools"]] == [
        "admin_reset", "create_ticket", "get_weather"]
    assert "capc/profile" not in everything["result"]["tools"][0]["_meta"]


def test_health_readiness_and_status(weather_manifest: Path) -> None:
    digest = load_manifest(weather_manifest, registry=ToolRegistry()).digest
    with running(app_for(weather_manifest)) as server:
        health = httpx.get(server.url("/healthz"))
        ready = httpx.get(server.url("/readyz"))
        status = httpx.get(server.url("/status")).json()
    assert health.status_code == 200 and ready.status_code == 200
    assert ready.json()["digest"] == digest
    assert status["digest"] == digest
    assert status["profiles"] == ["admin", "support"]
    assert status["reloads_accepted"] == 0 and status["reloads_rejected"] == 0
    assert status["last_rejection"] is None
    assert str(weather_manifest.parent) not in json.dumps(status)


def test_the_official_sdk_client_lists_and_calls(
        weather_manifest: Path, upstream: RecordingServer) -> None:
    async def session_work(url: str) -> tuple[list[str], str, bool, str]:
        async with sdk_session(url) as session:
            listed = await session.list_tools()
            called = await session.call_tool("get_weather", {"city": "Lima"})
            refused = await session.call_tool("get_weather", {"town": "Lima"})
            text = called.content[0].text  # type: ignore[union-attr]
            return ([tool.name for tool in listed.tools], text, refused.isError,
                    str(session.get_server_capabilities()))

    with running(app_for(weather_manifest)) as server:
        names, text, refused, capabilities = asyncio.run(
            session_work(server.url("/mcp/support")))
    assert names == ["create_ticket", "get_weather"]
    assert json.loads(text)["query"] == "city=Lima"
    assert refused is True
    assert "tools" in capabilities
    assert [request.raw_path for request in upstream.received] == ["/weather?city=Lima"]
