"""``create_app(..., watch=True)``: a new manifest is served from the next request on, a
bad one is refused and counted while the last good one keeps serving, and a call that
was running during a reload finishes on the manifest it started with."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx

from compiler.runtime import ToolRegistry
from compiler.runtime.serve import create_app
from tests.serve.conftest import weather_capabilities
from tests.serve.support import (
    JSON_HEADERS,
    post,
    profile,
    rpc,
    running,
    write_atomically,
    write_served_manifest,
)
from tests.serve.test_serve_load import eventually
from tests.support.runtime import ReceivedRequest, RecordingServer


def names(url: str) -> list[str]:
    return [tool["name"] for tool in post(url, rpc("tools/list")).json()["result"]["tools"]]


def test_reloads_are_served_and_bad_versions_refused(tmp_path: Path,
                                                     upstream: RecordingServer) -> None:
    capabilities = weather_capabilities(upstream.base_url)
    path = write_served_manifest(tmp_path / "manifest.json", capabilities,
                                 [profile("support", ["get_weather"])])
    app = create_app(path, registry=ToolRegistry(), allow_private_networks=True, watch=True,
                     watch_interval=0.05)
    with running(app) as server:
        url = server.url("/mcp/support")
        assert names(url) == ["get_weather"]
        write_served_manifest(path, capabilities,
                              [profile("support", ["get_weather", "create_ticket"])])
        assert eventually(lambda: httpx.get(server.url("/status")).json()[
            "reloads_accepted"] == 1)
        assert names(url) == ["create_ticket", "get_weather"]
        good = httpx.get(server.url("/status")).json()["digest"]
        tampered = json.loads(path.read_text())
        tampered["profiles"][0]["capabilities"] = ["get_weather", "create_ticket",
                                                   "admin_reset"]
        write_atomically(path, json.dumps(tampered))  # the digest no longer matches
        assert eventually(lambda: httpx.get(server.url("/status")).json()[
            "reloads_rejected"] == 1)
        status = httpx.get(server.url("/status")).json()
        assert names(url) == ["create_ticket", "get_weather"]  # the last good one
        assert status["digest"] == good
        assert status["last_rejection"]["check"] == "digest"
        assert str(tmp_path) not in json.dumps(status)


def test_a_call_running_during_a_reload_finishes(tmp_path: Path,
                                                 upstream: RecordingServer) -> None:
    arrived, release = threading.Event(), threading.Event()

    def slow(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        arrived.set()
        release.wait(60)
        return 200, {"Content-Type": "application/json"}, b'{"weather": "fine"}'

    upstream.responder = slow
    capabilities = weather_capabilities(upstream.base_url)
    path = write_served_manifest(tmp_path / "manifest.json", capabilities,
                                 [profile("support", ["get_weather"])])
    app = create_app(path, registry=ToolRegistry(), allow_private_networks=True, watch=True,
                     watch_interval=0.05)

    async def call_across_a_reload(url: str, status_url: str) -> dict[str, object]:
        async with httpx.AsyncClient(timeout=60) as client:
            call = asyncio.ensure_future(client.post(url, headers=JSON_HEADERS, content=rpc(
                "tools/call", {"name": "get_weather", "arguments": {"city": "Rome"}})))
            await asyncio.to_thread(arrived.wait, 60)
            write_served_manifest(path, capabilities, [profile("support", ["admin_reset"])])
            assert await asyncio.to_thread(eventually, lambda: httpx.get(status_url).json()[
                "reloads_accepted"] == 1)
            release.set()
            reply = await call
            result: dict[str, object] = reply.json()["result"]
            return result

    with running(app) as server:
        result = asyncio.run(call_across_a_reload(server.url("/mcp/support"),
                                                  server.url("/status")))
        assert names(server.url("/mcp/support")) == ["admin_reset"]
    assert result["isError"] is False
    assert "fine" in json.dumps(result)
