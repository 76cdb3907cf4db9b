"""Fault cases of the issue: the last good manifest keeps serving, the status says why,
nothing hangs (every check is awaited under a generous limit) and nothing leaks."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import compiler.runtime.fleet.watch as watch_module
from compiler.runtime import ManifestWatcher, ToolRegistry, watch_manifest
from compiler.runtime.fleet.watch_source import Fingerprint
from tests.runtime.fleet.support import (
    MANIFEST,
    capc_threads,
    digest_of,
    manifest_bytes,
    open_descriptors,
    other_tasks,
)

NEVER = 3600.0
LIMIT = 60.0  # "nothing hangs": far above any honest check, never a speed claim


@pytest.fixture
async def watched(tmp_path: Path) -> AsyncIterator[tuple[ManifestWatcher, Path]]:
    path = tmp_path / MANIFEST
    path.write_bytes(manifest_bytes(1))
    async with watch_manifest(path, registry=ToolRegistry(), interval=NEVER, events=False,
                              max_manifest_bytes=256 * 1024) as watcher:
        yield watcher, path


async def check(watcher: ManifestWatcher) -> str:
    return await asyncio.wait_for(watcher.check_now(), LIMIT)


def kept_first(watcher: ManifestWatcher) -> bool:
    return watcher.manifest.digest == digest_of(manifest_bytes(1))


async def test_a_manifest_replaced_mid_write_waits_for_the_whole_file(
        watched: tuple[ManifestWatcher, Path]) -> None:
    watcher, path = watched
    complete = manifest_bytes(2)
    with path.open("wb") as stream:  # rewritten in place, as a careless copy does
        stream.write(complete[: len(complete) // 2])
        stream.flush()
        assert await check(watcher) == "rejected"
        assert kept_first(watcher)
        assert watcher.status.last_rejection is not None
        assert watcher.status.last_rejection.check == "json"
        stream.write(complete[len(complete) // 2:])
    assert await check(watcher) == "accepted"
    assert watcher.manifest.digest == digest_of(complete)


async def test_a_deleted_manifest_keeps_the_last_good(
        watched: tuple[ManifestWatcher, Path]) -> None:
    watcher, path = watched
    path.unlink()
    assert await check(watcher) == "rejected"
    assert kept_first(watcher)
    rejection = watcher.status.last_rejection
    assert rejection is not None and "missing" in rejection.reason
    assert await check(watcher) == "unchanged"  # still missing: nothing new to say
    path.write_bytes(manifest_bytes(2))
    assert await check(watcher) == "accepted"


async def test_a_manifest_replaced_by_a_directory_is_refused(
        watched: tuple[ManifestWatcher, Path]) -> None:
    watcher, path = watched
    path.unlink()
    path.mkdir()
    assert await check(watcher) == "rejected"
    rejection = watcher.status.last_rejection
    assert rejection is not None and "directory" in rejection.reason and kept_first(watcher)


async def test_a_symlink_loop_is_refused(watched: tuple[ManifestWatcher, Path]) -> None:
    watcher, path = watched
    path.unlink()
    other = path.with_name("other.json")
    path.symlink_to(other.name)
    other.symlink_to(path.name)
    assert await check(watcher) == "rejected"
    rejection = watcher.status.last_rejection
    assert rejection is not None and "symlink loop" in rejection.reason and kept_first(watcher)


@pytest.mark.parametrize("special", ["device", "fifo"])
async def test_a_device_or_fifo_in_its_place_does_not_hang(
        watched: tuple[ManifestWatcher, Path], special: str) -> None:
    watcher, path = watched
    path.unlink()
    if special == "device":
        path.symlink_to("/dev/zero")  # endless bytes
    else:
        os.mkfifo(path)  # no writer: a blocking open would wait forever
    assert await check(watcher) == "rejected"
    rejection = watcher.status.last_rejection
    assert rejection is not None and "not a regular file" in rejection.reason
    assert kept_first(watcher)


async def test_a_file_that_grows_forever_is_read_within_the_limit(
        watched: tuple[ManifestWatcher, Path], caplog: pytest.LogCaptureFixture) -> None:
    watcher, path = watched
    stop = threading.Event()
    written = threading.Event()

    def grow() -> None:
        with path.open("ab") as stream:
            while not stop.is_set():
                stream.write(b" " * 4096)
                stream.flush()
                written.set()

    writer = threading.Thread(target=grow, daemon=True)
    writer.start()
    try:
        assert written.wait(LIMIT)
        outcomes = [await check(watcher) for _ in range(5)]
    finally:
        stop.set()
        writer.join(LIMIT)
    # Until it passes the limit it is a file being written (bad JSON); then it is too large.
    assert set(outcomes) <= {"rejected", "unchanged"} and kept_first(watcher)
    while path.stat().st_size <= 256 * 1024:
        with path.open("ab") as stream:
            stream.write(b" " * 65536)
    assert await check(watcher) in {"rejected", "unchanged"}
    rejection = watcher.status.last_rejection
    assert rejection is not None and "larger than max_manifest_bytes" in rejection.reason
    before = watcher.status.reloads_rejected
    for _ in range(3):  # still growing: the same bad version, counted once
        with path.open("ab") as stream:
            stream.write(b" " * 1024)
        assert await check(watcher) == "rejected"
    assert watcher.status.reloads_rejected == before


async def test_a_writer_clock_that_jumps_back_still_counts_as_a_change(
        watched: tuple[ManifestWatcher, Path]) -> None:
    watcher, path = watched
    previous = path.stat()
    second = manifest_bytes(2)
    temporary = path.with_name("incoming.json")
    temporary.write_bytes(second)
    # The new file claims to be older than the one it replaces (a clock set back).
    os.utime(temporary, ns=(previous.st_atime_ns, previous.st_mtime_ns - 3600 * 10**9))
    os.replace(temporary, path)
    assert await check(watcher) == "accepted"
    # Rewritten in place to the same size with the old modification time restored.
    third = manifest_bytes(3)
    assert len(third) == len(second)
    stamp = path.stat()
    path.write_bytes(third)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert await check(watcher) == "accepted"
    assert watcher.manifest.digest == digest_of(third)


async def test_a_burst_of_a_thousand_changes_ends_on_the_last_version(tmp_path: Path) -> None:
    path = tmp_path / MANIFEST
    versions = [manifest_bytes(number) for number in range(1, 5)]
    path.write_bytes(versions[0])
    tasks_before, threads_before = other_tasks(), capc_threads()
    descriptors_before = open_descriptors()
    async with watch_manifest(path, registry=ToolRegistry(), interval=0.001,
                              events=False) as watcher:
        done = threading.Event()

        def burst() -> None:
            for number in range(1000):
                temporary = path.with_name(f".incoming-{number % 2}")
                content = versions[number % 4] if number % 3 else b"{ truncated"
                temporary.write_bytes(content)
                os.replace(temporary, path)
            done.set()

        writer = threading.Thread(target=burst, daemon=True)
        writer.start()
        while not done.is_set():
            await asyncio.sleep(0.001)  # the poll runs meanwhile
        writer.join(LIMIT)
        final = manifest_bytes(9)
        path.write_bytes(final)
        await check(watcher)
        status = watcher.status
        assert watcher.manifest.digest == digest_of(final) == status.digest
        assert status.reloads_accepted >= 1
        assert status.reloads_accepted + status.reloads_rejected <= 1001
    assert other_tasks() == tasks_before
    assert capc_threads() == threads_before
    assert open_descriptors() == descriptors_before


async def test_a_rewrite_hidden_by_coarse_timestamps_is_still_found(
        watched: tuple[ManifestWatcher, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # A file system whose clock ticks coarsely, and a rename that reuses the freed inode:
    # the next version has exactly the stat of the last one. Modelled by a stat that never
    # changes, stamped now (racy) or an hour ago (settled).
    watcher, path = watched

    def frozen_stat(stamp: int) -> Fingerprint:
        return Fingerprint((1, 2, len(manifest_bytes(1)), stamp, stamp, 0o100000), None)

    now = time.time_ns()
    monkeypatch.setattr(watch_module, "fingerprint", lambda *_: frozen_stat(now))
    assert await check(watcher) == "unchanged"  # recorded as seen, but too recent to trust
    path.write_bytes(manifest_bytes(2))
    assert await check(watcher) == "accepted"
    assert watcher.manifest.digest == digest_of(manifest_bytes(2))
    settled = now - 3600 * 10**9
    monkeypatch.setattr(watch_module, "fingerprint", lambda *_: frozen_stat(settled))
    assert await check(watcher) == "unchanged"
    path.write_bytes(manifest_bytes(3))
    # A settled stat is trusted: that is what keeps a poll to two stat calls.
    assert await check(watcher) == "unchanged"
