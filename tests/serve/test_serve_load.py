"""Many callers at once: 200 concurrent calls of many users through a host's context
function, each request upstream carrying its own user's setting; a client that goes
away mid-call; nothing left running or open afterwards."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from starlette.requests import Request

from compiler.runtime import RuntimeContext, ToolRegistry
from compiler.runtime.serve import Identity, create_app
from tests.serve.support import (
    JSON_HEADERS,
    RunningServer,
    profile,
    rpc,
    running,
    write_served_manifest,
)
from tests.support.runtime import ReceivedRequest, RecordingServer, api_capability

USERS = 40
CALLS = 200


class TokenPerUser:
    """A host's settings service: each user has their own API token."""

    async def get_user_setting_value(self, name: str, user_id: Any, group_id: Any) -> str | None:
        await asyncio.sleep(0)  # let other users' resolutions interleave
        return f"token-of-{user_id}" if name == "API_TOKEN" else None


def context_from_header(request: Request, identity: Identity) -> RuntimeContext:
    """The host authenticated the user its own way (a header, here)."""
    return RuntimeContext(user_id=request.headers["x-user"], group_id=1,
                          settings=TokenPerUser())


def whoami_manifest(path: Path, base_url: str) -> Path:
    capability = api_capability(
        "whoami", base_url + "/whoami", properties={"who": {"type": "string"}},
        arguments={"who": {"bindings": ["query"], "type": "string"}}, required=["who"],
        headers={"Authorization": "Bearer ${API_TOKEN}"}, placeholders=["API_TOKEN"])
    return write_served_manifest(path, [capability], [profile("team", ["whoami"])])


def eventually(condition: Any, deadline: float = 60.0) -> bool:
    """Whether ``condition()`` comes true (polled; the deadline only bounds a failure)."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_concurrent_calls_of_many_users_never_cross(tmp_path: Path,
                                                    upstream: RecordingServer) -> None:
    manifest = whoami_manifest(tmp_path / "m.json", upstream.base_url)
    app = create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                     context_factory=context_from_header)

    async def calls(url: str) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(timeout=120) as client:
            async def one(index: int) -> dict[str, Any]:
                user = f"u{index % USERS}"
                body = rpc("tools/call", {"name": "whoami", "arguments": {"who": user}},
                           request_id=index)
                reply = await client.post(url, content=body,
                                          headers={**JSON_HEADERS, "x-user": user})
                return {"user": user, **reply.json()}
            return list(await asyncio.gather(*(one(index) for index in range(CALLS))))

    with running(app) as server:
        replies = asyncio.run(calls(server.url("/mcp/team")))
        status = httpx.get(server.url("/status")).json()
    assert len(replies) == CALLS
    failed = [reply for reply in replies if reply["result"]["isError"] is not False]
    assert failed == []  # each failed reply says why
    assert sorted(reply["id"] for reply in replies) == list(range(CALLS))
    assert len(upstream.received) == CALLS
    for request in upstream.received:
        who = request.query.removeprefix("who=")
        assert request.header("authorization") == f"Bearer token-of-{who}"
    for reply in replies:
        text = reply["result"]["content"][0]["text"]
        assert "token-of-" not in text  # masked: no user's secret reaches any result
    assert status["calls_running"] == 0


def test_a_client_that_disconnects_mid_call_loses_nothing_and_leaks_nothing(
        tmp_path: Path, upstream: RecordingServer) -> None:
    arrived = threading.Event()
    release = threading.Event()

    def slow(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        if "slow" in request.query:
            arrived.set()
            release.wait(60)
        return 200, {"Content-Type": "application/json"}, json.dumps(
            {"query": request.query}).encode()

    upstream.responder = slow
    manifest = whoami_manifest(tmp_path / "m.json", upstream.base_url)
    app = create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                     context_factory=context_from_header)

    async def abandon(server: RunningServer) -> None:
        async with httpx.AsyncClient(timeout=120) as client:
            body = rpc("tools/call", {"name": "whoami", "arguments": {"who": "slow"}})
            call = asyncio.ensure_future(client.post(
                server.url("/mcp/team"), content=body, headers={**JSON_HEADERS, "x-user": "a"}))
            await asyncio.to_thread(arrived.wait, 60)
            call.cancel()  # the client goes away while the upstream is still answering
            await asyncio.gather(call, return_exceptions=True)

    with running(app) as server:
        warm = httpx.post(server.url("/mcp/team"), content=rpc(
            "tools/call", {"name": "whoami", "arguments": {"who": "warm"}}),
            headers={**JSON_HEADERS, "x-user": "a"})
        assert warm.json()["result"]["isError"] is False
        before = open_descriptors()
        asyncio.run(abandon(server))
        release.set()
        after_call = httpx.post(server.url("/mcp/team"), content=rpc(
            "tools/call", {"name": "whoami", "arguments": {"who": "next"}}),
            headers={**JSON_HEADERS, "x-user": "b"})
        assert after_call.json()["result"]["isError"] is False
        # The abandoned call finished upstream (it was not lost half-way) and released
        # its slot: the next call after it was answered and nothing is running.
        assert [request.query for request in upstream.received] == [
            "who=warm", "who=slow", "who=next"]
        assert eventually(lambda: httpx.get(server.url("/status")).json()[
            "calls_running"] == 0)
        # Pools and sockets are reused, not piled up per call.
        assert eventually(lambda: open_descriptors() <= before + 4)
