"""``tool.invoke``: the async request path run on the manifest's portal loop.

Same outputs, errors and masking as ``ainvoke``; many threads at once; a thread with a
running loop (a notebook cell); timeouts; and shutdown that leaves no thread or pooled
connection behind.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.egress.portal import PORTAL_THREAD_NAME
from tests.support.runtime import ReceivedRequest, RecordingServer, api_capability, write_manifest

HANG_GUARD = 60  # seconds: only a hang ever reaches it

SECRET = "sync-secret-value"


def echo_capability(url: str, **options: Any) -> dict[str, Any]:
    return api_capability(
        "echo", url,
        properties={"q": {"type": "string", "minLength": 1}, "n": {"type": "integer"}},
        arguments={"q": {"bindings": ["query"], "type": "string"},
                   "n": {"bindings": ["query"], "type": "integer"}},
        required=["q"], headers={"Authorization": "Bearer ${TOKEN}"}, placeholders=["TOKEN"],
        **options,
    )


def load(tmp_path: Path, url: str, **options: Any) -> Any:
    path = write_manifest(tmp_path / "m.json", [echo_capability(url, **options)])
    return load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)


def context() -> RuntimeContext:
    return RuntimeContext(user_id=1, settings=StaticSettings({"TOKEN": SECRET}))


def resolve_tool(manifest: Any) -> Any:
    toolset = asyncio.run(manifest.resolve(["echo"], context()))
    return toolset.tools[0]


def portal_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == PORTAL_THREAD_NAME]


def echo_secret(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    # A careless API that echoes the credentials in its error page.
    return 500, {"Content-Type": "text/plain"}, f"boom {request.header('Authorization')}".encode()


def test_sync_and_async_calls_answer_alike(server: RecordingServer, tmp_path: Path) -> None:
    manifest = load(tmp_path, server.base_url + "/s")
    tool = resolve_tool(manifest)
    cases: list[dict[str, Any]] = [{"q": "tea", "n": 2}, {"q": ""}, {"q": "x", "n": True}]
    sync = [tool.invoke(arguments) for arguments in cases]
    server.responder = echo_secret
    sync.append(tool.invoke({"q": "boom"}))
    server.responder = lambda request: (200, {}, b'{"ok": true}')

    async def asynchronous() -> list[Any]:
        outputs = [await tool.ainvoke(arguments) for arguments in cases]
        server.responder = echo_secret
        outputs.append(await tool.ainvoke({"q": "boom"}))
        await manifest.aclose()
        return outputs

    assert asyncio.run(asynchronous()) == sync
    assert sync[0] == '{"ok": true}'
    assert sync[1].startswith("Error: invalid arguments for echo: q:")
    assert sync[2].startswith("Error: invalid arguments for echo: n:")
    assert sync[3].startswith("Error: HTTP 500 from GET http://127.0.0.1")
    assert SECRET not in sync[3] and "boom Bearer" in sync[3]
    assert [request.raw_path for request in server.received] == [
        "/s?n=2&q=tea", "/s?q=boom", "/s?n=2&q=tea", "/s?q=boom"]
    assert all(request.header("Authorization") == f"Bearer {SECRET}"
               for request in server.received)


def test_many_threads_share_one_portal_and_its_pool(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest = load(tmp_path, server.base_url + "/s")
    tool = resolve_tool(manifest)
    before = len(portal_threads())
    with ThreadPoolExecutor(max_workers=16) as pool:
        outputs = list(pool.map(lambda index: tool.invoke({"q": f"t{index}"}), range(64)))
    assert outputs == ['{"ok": true}'] * 64
    assert sorted(request.raw_path for request in server.received) == sorted(
        f"/s?q=t{index}" for index in range(64))
    assert len(portal_threads()) == before + 1
    clients = manifest._client.clients()  # private: which loop's client served the calls
    assert set(clients) == {"portal"}
    snapshot = clients["portal"].pool()
    assert snapshot.active == 0 and snapshot.total <= 20
    manifest.close()
    assert len(portal_threads()) == before
    assert clients["portal"].pool().total == 0


async def test_a_sync_call_from_a_running_loop_uses_the_portal_not_the_callers_pool(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest = load(tmp_path, server.base_url + "/s")
    toolset = await manifest.resolve(["echo"], context())
    tool = toolset.tools[0]
    # A notebook cell: the calling thread's loop is running.
    assert tool.invoke({"q": "cell"}) == '{"ok": true}'
    assert await tool.ainvoke({"q": "async"}) == '{"ok": true}'
    # Both at once, from this loop and from worker threads.
    sync_calls = asyncio.gather(*(asyncio.to_thread(tool.invoke, {"q": f"s{i}"}) for i in range(8)))
    async_calls = asyncio.gather(*(tool.ainvoke({"q": f"a{i}"}) for i in range(8)))
    outputs = await asyncio.gather(sync_calls, async_calls)
    assert outputs == [['{"ok": true}'] * 8, ['{"ok": true}'] * 8]
    clients = manifest._client.clients()
    assert set(clients) == {"main", "portal"} and clients["main"] is not clients["portal"]
    await manifest.aclose()
    assert all(client.pool().total == 0 for client in clients.values())
    assert not any(thread.is_alive() for thread in portal_threads())
    assert len(server.received) == 18
    closed = tool.invoke({"q": "late"})
    assert closed == "Error: echo was not called: this manifest was closed; load it again"
    assert len(server.received) == 18


def test_a_stalled_endpoint_times_out_in_a_sync_call(
    server: RecordingServer, tmp_path: Path
) -> None:
    release = threading.Event()

    def stall(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        release.wait(10)
        return 200, {}, b"late"

    server.responder = stall
    manifest = load(tmp_path, server.base_url + "/s", timeout=0.3)
    tool = resolve_tool(manifest)
    try:
        output = tool.invoke({"q": "slow"})
    finally:
        release.set()
    # Sent and left unanswered (the usual case), or, on a loaded machine, not even sent in
    # time: either way the text says which, and the server agrees.
    origin = server.base_url
    if server.received:
        assert output == (f"Error: echo failed: no complete response from {origin} within "
                          "0.3 s; try again later or ask for less")
    else:
        assert output in (
            f"Error: echo failed: no complete response from {origin} within 0.3 s; "
            "try again later or ask for less",
            f"Error: echo was not called: its timeout of 0.3 s ran out before the request to "
            f"{origin} was sent; try again later",
        ), output
    server.responder = lambda request: (200, {}, json.dumps({"after": True}).encode())
    assert tool.invoke({"q": "next"}) == '{"after": true}'
    manifest.close()


def test_a_manifest_dropped_without_closing_stops_its_portal(
    server: RecordingServer, tmp_path: Path
) -> None:
    before = portal_threads()

    def use_and_drop() -> threading.Thread:
        manifest = load(tmp_path, server.base_url + "/s")
        assert resolve_tool(manifest).invoke({"q": "x"}) == '{"ok": true}'
        (started,) = [thread for thread in portal_threads() if thread not in before]
        return started

    portal = use_and_drop()
    gc.collect()
    # The thread ends on its own once the manifest is collected: wait for that end (the
    # limit only stops a hang), not for a number of seconds.
    portal.join(HANG_GUARD)
    assert not portal.is_alive()
    assert portal_threads() == before
