"""Sync callers never hang: closing a manifest under them, and slots shared with async calls.

Each scenario runs in threads joined with a generous limit, so a regression fails (with the
thread still stuck) instead of hanging the suite. What is asserted is that every caller
returned, and with which text; never how fast.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpcore
import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.egress.transport import SystemResolver
from tests.support.runtime import ReceivedRequest, RecordingServer, api_capability, write_manifest

JOIN_LIMIT = 20.0  # far beyond any healthy run: reaching it means a caller hung


def echo_capability(url: str, timeout: float, **api: Any) -> dict[str, Any]:
    entry = api_capability(
        "echo", url, properties={"q": {"type": "string"}},
        arguments={"q": {"bindings": ["query"], "type": "string"}}, timeout=timeout,
    )
    entry["api"].update(api)
    return entry


def load(tmp_path: Path, url: str, timeout: float, **api: Any) -> Any:
    path = write_manifest(tmp_path / "m.json", [echo_capability(url, timeout, **api)])
    return load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)


async def resolve(manifest: Any) -> Any:
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({}))
    return (await manifest.resolve(["echo"], ctx)).tools[0]


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Start ``target`` in a daemon thread; its result (or exception) lands in the list."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(target())
        except BaseException as error:  # the assertion reports it
            result.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def wait_until(condition: Callable[[], bool]) -> None:
    """Wait for a state the test needs (not a duration); give up at the join limit."""
    done = threading.Event()
    for _ in range(int(JOIN_LIMIT / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("the awaited state never came")


def stalled_server(server: RecordingServer) -> threading.Event:
    release = threading.Event()

    def stall(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        release.wait(JOIN_LIMIT)
        return 200, {}, b'{"late": true}'

    server.responder = stall
    return release


CANCELLED = ("Error: echo was cancelled: this manifest was closed while the call was in "
             "flight, so it was cancelled; its request may have reached the API")


@pytest.mark.parametrize("closing", ["close", "aclose"])
def test_a_sync_call_in_flight_returns_when_the_manifest_closes(
    server: RecordingServer, tmp_path: Path, closing: str
) -> None:
    release = stalled_server(server)
    manifest = load(tmp_path, server.base_url + "/s", timeout=600)
    tool = asyncio.run(resolve(manifest))
    try:
        caller, said = in_thread(lambda: tool.invoke({"q": "x"}))
        wait_until(lambda: len(server.received) == 1)  # the call is in flight now
        if closing == "close":
            closer, closed = in_thread(manifest.close)
        else:
            closer, closed = in_thread(lambda: asyncio.run(manifest.aclose()))
        caller.join(JOIN_LIMIT)
        closer.join(JOIN_LIMIT)
    finally:
        release.set()
    assert not caller.is_alive(), "the sync caller hung after the manifest closed"
    assert not closer.is_alive(), "closing the manifest hung"
    assert closed == [None]
    assert said == [CANCELLED]
    # Afterwards a call is refused before anything is sent.
    late = tool.invoke({"q": "late"})
    assert late == "Error: echo was not called: this manifest was closed; load it again"
    assert len(server.received) == 1


def test_many_sync_calls_in_flight_all_return_when_the_manifest_closes(
    server: RecordingServer, tmp_path: Path
) -> None:
    release = stalled_server(server)
    manifest = load(tmp_path, server.base_url + "/s", timeout=600, max_concurrency=2)
    tool = asyncio.run(resolve(manifest))
    try:
        callers = [in_thread(lambda: tool.invoke({"q": "x"})) for _ in range(5)]
        # Two are sent, three wait for a slot: closing must end both kinds of wait. Both
        # states are awaited (a loaded machine may not have queued the last caller yet).
        limiter = tool.coroutine._blueprint.limiter
        wait_until(lambda: len(server.received) == 2 and limiter.waiting == 3)
        manifest.close()
        for thread, _ in callers:
            thread.join(JOIN_LIMIT)
    finally:
        release.set()
    assert not any(thread.is_alive() for thread, _ in callers)
    assert [said for _, said in callers] == [[CANCELLED]] * 5
    assert len(server.received) == 2


def test_sync_and_async_callers_sharing_slots_never_deadlock(
    server: RecordingServer, tmp_path: Path
) -> None:
    """The loop's default executor is full of sync callers waiting for the one slot; the
    async call that gets the slot must still resolve its host name and finish."""
    port = server.base_url.rsplit(":", 1)[1]
    # A host name, so the slot holder needs a DNS lookup after the executor filled up.
    manifest = load(tmp_path, f"http://localhost:{port}/s", timeout=30, max_concurrency=1)
    sync_callers = 3

    async def scenario() -> tuple[str, list[str]]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=sync_callers))
        tool = await resolve(manifest)
        limiter = tool.coroutine._blueprint.limiter
        async with manifest:
            async with limiter.slot():  # held by the test while the queue forms
                first = asyncio.create_task(tool.ainvoke({"q": "async"}))
                await until(lambda: limiter.waiting == 1)
                # LangGraph's way with sync tools: each blocks a default-executor thread.
                synced = [loop.run_in_executor(None, tool.invoke, {"q": f"sync{n}"})
                          for n in range(sync_callers)]
                await until(lambda: limiter.waiting == 1 + sync_callers)
            # The slot goes to the async call first; the executor has no thread left.
            return str(await first), [str(text) for text in await asyncio.gather(*synced)]

    thread, result = in_thread(lambda: asyncio.run(scenario()))
    thread.join(JOIN_LIMIT * 3)
    assert not thread.is_alive(), "sync and async callers deadlocked"
    assert result == [('{"ok": true}', ['{"ok": true}'] * sync_callers)], result
    assert len(server.received) == 1 + sync_callers


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the loop (and let other threads run) until ``condition`` holds."""
    for _ in range(int(JOIN_LIMIT / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the awaited state never came")


async def test_the_resolver_has_threads_of_its_own_and_refuses_cleanly_once_closed() -> None:
    loop = asyncio.get_running_loop()
    blocked = threading.Event()
    # Every default-executor thread is busy: a lookup must not need one.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    busy = loop.run_in_executor(None, blocked.wait, JOIN_LIMIT)
    resolver = SystemResolver()
    try:
        found = await asyncio.wait_for(resolver("127.0.0.1", 80), JOIN_LIMIT)
    finally:
        blocked.set()
        await busy
    assert [str(address) for address in found] == ["127.0.0.1"]
    resolver.close()
    with pytest.raises(httpcore.ConnectError, match="the client was closed"):
        await resolver("127.0.0.1", 80)
