"""Calls and resolves that started on a manifest finish on it; its pools close after.

A real HTTP server on 127.0.0.1 holds a response until the test lets it go, so "a call
is in flight during the reload" is a fact the test arranges, not a race it hopes for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compiler.runtime import ManifestWatcher, RuntimeContext, ToolRegistry, watch_manifest
from tests.runtime.fleet.support import (
    MANIFEST,
    capc_threads,
    digest_of,
    manifest_bytes,
    open_descriptors,
    other_tasks,
)
from tests.support.runtime import ReceivedRequest, RecordingServer, recording_server

LIMIT = 60.0
NEVER = 3600.0


@pytest.fixture
def gated() -> Iterator[tuple[RecordingServer, threading.Event]]:
    release = threading.Event()
    with recording_server() as server:
        def answer(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
            release.wait(LIMIT)
            return 200, {"Content-Type": "application/json"}, b'{"from": "%s"}' % (
                request.path.encode())
        server.responder = answer
        yield server, release
        release.set()


async def until(condition: object, what: str) -> None:
    for _ in range(int(LIMIT / 0.01)):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """``until`` for a plain script's thread."""
    for _ in range(int(LIMIT / 0.01)):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never happened: {what}")


def pools(manifest: object) -> int:
    return int(manifest.open_pools)  # type: ignore[attr-defined]


async def start(tmp_path: Path, server: RecordingServer) -> tuple[ManifestWatcher, Path]:
    path = tmp_path / MANIFEST
    path.write_bytes(manifest_bytes(1, server.base_url))
    watcher = watch_manifest(path, registry=ToolRegistry(), interval=NEVER, events=False,
                             allow_private_networks=True)
    return await watcher.start(), path


async def test_a_call_in_flight_finishes_on_its_manifest_which_closes_after(
        tmp_path: Path, gated: tuple[RecordingServer, threading.Event]) -> None:
    server, release = gated
    threads, descriptors, tasks = capc_threads(), open_descriptors(), other_tasks()
    watcher, path = await start(tmp_path, server)
    old = watcher.manifest
    toolset = await watcher.resolve(["lookup"], RuntimeContext())
    call = asyncio.create_task(toolset.tools[0].ainvoke({"item": "a"}))
    await until(lambda: server.received, "the request reached the server")
    path.write_bytes(manifest_bytes(2, server.base_url))
    assert await watcher.check_now() == "accepted"
    # The call still uses the old manifest: its pool stays open under it.
    assert watcher.status.retired_in_use == 1 and pools(old) == 1
    release.set()
    answer = await asyncio.wait_for(call, LIMIT)
    assert answer == '{"from": "/v1/items/a"}'
    await until(lambda: pools(old) == 0, "the old manifest's pool was closed")
    assert watcher.status.retired_in_use == 0
    fresh = await watcher.resolve(["lookup"], RuntimeContext())
    assert await fresh.tools[0].ainvoke({"item": "b"}) == '{"from": "/v2/items/b"}'
    assert fresh.tools[0].metadata["capc.manifest_digest"] == watcher.status.digest
    await watcher.aclose()
    assert other_tasks() == tasks
    # A closed client's DNS threads end on their own; the server's end of each connection
    # closes in its own thread once ours is closed: both are awaited, not assumed.
    await until(lambda: capc_threads() == threads, "every capc thread ended")
    await until(lambda: open_descriptors() == descriptors, "every socket was closed")


async def test_a_lease_keeps_one_manifest_for_a_whole_run(
        tmp_path: Path, gated: tuple[RecordingServer, threading.Event]) -> None:
    server, release = gated
    release.set()
    watcher, path = await start(tmp_path, server)
    try:
        async with watcher.lease() as manifest:
            path.write_bytes(manifest_bytes(2, server.base_url))
            assert await watcher.check_now() == "accepted"
            # Resolved after the reload, inside the lease: still the leased version.
            toolset = await manifest.resolve(["lookup"], RuntimeContext())
            assert await toolset.tools[0].ainvoke({"item": "x"}) == '{"from": "/v1/items/x"}'
            assert toolset.tools[0].metadata["capc.manifest_digest"] == digest_of(
                manifest_bytes(1, server.base_url))
            assert pools(manifest) == 1
        await until(lambda: pools(manifest) == 0, "the leased manifest's pool closed after")
        # A tool kept past its lease still works on its own version: the call opens a pool
        # for itself, and it is closed again once the call is done.
        late = await toolset.tools[0].ainvoke({"item": "y"})
        assert late == '{"from": "/v1/items/y"}'
        await until(lambda: pools(manifest) == 0, "the straggler's pool closed after it")
    finally:
        await watcher.aclose()


async def test_calls_running_through_a_hundred_reloads_all_succeed(
        tmp_path: Path, gated: tuple[RecordingServer, threading.Event]) -> None:
    server, release = gated
    release.set()
    threads, descriptors = capc_threads(), open_descriptors()
    watcher, path = await start(tmp_path, server)
    failures: list[str] = []
    stop = asyncio.Event()

    async def caller() -> int:
        made = 0
        while not stop.is_set():
            toolset = await watcher.resolve(["lookup"], RuntimeContext())
            answer = await toolset.tools[0].ainvoke({"item": "z"})
            if not answer.startswith('{"from"'):
                failures.append(answer)
            made += 1
        return made

    callers = [asyncio.create_task(caller()) for _ in range(4)]
    for number in range(2, 102):
        path.write_bytes(manifest_bytes(number, server.base_url))
        assert await watcher.check_now() == "accepted"
        await asyncio.sleep(0)
    stop.set()
    made = await asyncio.wait_for(asyncio.gather(*callers), LIMIT)
    assert failures == [] and sum(made) >= 4
    assert watcher.status.reloads_accepted == 100
    # Every replaced manifest let go of its pool once its calls were done.
    await until(lambda: watcher.status.retired_in_use == 0, "every old pool was closed")
    await watcher.aclose()
    await until(lambda: capc_threads() == threads, "every capc thread ended")
    await until(lambda: open_descriptors() == descriptors, "every socket was closed")


async def test_aclose_closes_current_and_retired_manifests(
        tmp_path: Path, gated: tuple[RecordingServer, threading.Event]) -> None:
    server, release = gated
    watcher, path = await start(tmp_path, server)
    with watcher.lease() as held:
        path.write_bytes(manifest_bytes(2, server.base_url))
        assert await watcher.check_now() == "accepted"
        current = watcher.manifest
        await watcher.aclose()
        assert held.closed and current.closed
    release.set()


def test_sync_calls_in_a_plain_script_release_their_pools_after_a_reload(
        tmp_path: Path, gated: tuple[RecordingServer, threading.Event]) -> None:
    server, release = gated
    release.set()
    threads = capc_threads()
    path = tmp_path / MANIFEST
    path.write_bytes(manifest_bytes(1, server.base_url))
    with watch_manifest(path, registry=ToolRegistry(), interval=NEVER, events=False,
                        allow_private_networks=True) as watcher:
        old = watcher.manifest
        toolset = asyncio.run(watcher.resolve(["lookup"], RuntimeContext()))
        assert toolset.tools[0].invoke({"item": "s"}) == '{"from": "/v1/items/s"}'
        assert pools(old) == 1  # the sync portal's own pool
        path.write_bytes(manifest_bytes(2, server.base_url))
        assert watcher.check_now_sync() == "accepted"
        wait_until(lambda: pools(old) == 0, "the old manifest's portal pool was closed")
        # Called again after the release: it works, and lets go of its pool again.
        assert toolset.tools[0].invoke({"item": "t"}) == '{"from": "/v1/items/t"}'
    assert old.closed
    wait_until(lambda: capc_threads() == threads, "every capc thread ended")
