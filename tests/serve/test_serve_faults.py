"""Faults behind a served tool: a failing upstream, an upstream slower than the call
bound, a tool a reload dropped; and the serve package as a leaf of the runtime."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx

from compiler.runtime import StaticSettings, ToolRegistry
from compiler.runtime.serve import ServeLimits, create_app
from tests.runtime.test_leaf_import import modules_after, offenders
from tests.serve.conftest import weather_capabilities
from tests.serve.support import post, profile, rpc, running, write_served_manifest
from tests.serve.test_serve_load import eventually
from tests.support.runtime import ReceivedRequest, RecordingServer, api_capability

SECRET = "s3cr3t-weather-token-value"


def test_a_failing_upstream_is_an_error_result_without_secrets(
        tmp_path: Path, upstream: RecordingServer) -> None:

    upstream.responder = lambda request: (500, {"Content-Type": "text/plain"},
                                          f"boom {request.header('authorization')}".encode())
    capability = api_capability(
        "get_weather", upstream.base_url + "/weather", properties={"city": {"type": "string"}},
        arguments={"city": {"bindings": ["query"], "type": "string"}}, required=["city"],
        headers={"Authorization": "Bearer ${WEATHER_TOKEN}"}, placeholders=["WEATHER_TOKEN"])
    manifest = write_served_manifest(tmp_path / "m.json", [capability],
                                     [profile("support", ["get_weather"])])
    app = create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                     settings=StaticSettings({"WEATHER_TOKEN": SECRET}))
    with running(app) as server:
        reply = post(server.url("/mcp/support"), rpc("tools/call", {
            "name": "get_weather", "arguments": {"city": "Bern"}}))
        status = post(server.url("/mcp/support"), rpc("ping"))
    result = reply.json()["result"]
    assert result["isError"] is True and "500" in result["content"][0]["text"]
    assert SECRET not in reply.text
    assert upstream.last().header("authorization") == f"Bearer {SECRET}"
    assert status.status_code == 200


def test_a_call_past_its_bound_is_an_error_result(weather_manifest: Path,
                                                 upstream: RecordingServer) -> None:
    release = threading.Event()

    def stalled(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        release.wait(60)
        return 200, {"Content-Type": "application/json"}, b"{}"

    upstream.responder = stalled
    app = create_app(weather_manifest, registry=ToolRegistry(), allow_private_networks=True,
                     limits=ServeLimits(call_timeout=1.0))
    try:
        with running(app) as server:
            reply = post(server.url("/mcp/support"), rpc("tools/call", {
                "name": "get_weather", "arguments": {"city": "Lund"}}))
            release.set()
            again = post(server.url("/mcp/support"), rpc("ping"))
    finally:
        release.set()
    result = reply.json()["result"]
    assert result["isError"] is True and "did not finish within 1 s" in result["content"][0][
        "text"]
    assert again.status_code == 200


def test_a_tool_dropped_by_a_reload_runs_nothing(tmp_path: Path,
                                                 upstream: RecordingServer) -> None:

    capabilities = weather_capabilities(upstream.base_url)
    path = write_served_manifest(tmp_path / "m.json", capabilities,
                                 [profile("support", ["get_weather"])])
    app = create_app(path, registry=ToolRegistry(), allow_private_networks=True, watch=True,
                     watch_interval=0.05)
    with running(app) as server:
        write_served_manifest(path, capabilities, [profile("support", ["create_ticket"])])
        assert eventually(lambda: httpx.get(server.url("/status")).json()[
            "reloads_accepted"] == 1)
        reply = post(server.url("/mcp/support"), rpc("tools/call", {
            "name": "get_weather", "arguments": {"city": "Bern"}}))
    assert reply.json()["error"]["code"] == -32602
    assert upstream.received == []


def test_the_serve_package_is_a_leaf_of_the_runtime() -> None:
    modules = modules_after("import compiler.runtime.serve.app, compiler.runtime.serve.stdio",
                            block=True)
    assert offenders(modules) == []
    assert json.dumps(sorted(m for m in modules if m.split(".")[0] == "mcp")) == "[]"
