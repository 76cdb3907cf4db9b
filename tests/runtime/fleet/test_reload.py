"""watch_manifest against a real ConfigMap-style volume: swaps, signatures, status, logs.

Reloads are driven by ``await watcher.check_now()`` (what one poll does); nothing here
waits for a poll interval to pass.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from compiler.runtime import ManifestError, ToolRegistry, watch_manifest
from compiler.runtime.manifest.signature import SignatureRefused
from tests.runtime.fleet.support import (
    MANIFEST,
    ConfigMapVolume,
    capc_threads,
    digest_of,
    manifest_bytes,
    signature_bytes,
)
from tests.support.signing import new_key

NEVER = 3600.0  # a poll interval no test waits for


@pytest.fixture
def volume(tmp_path: Path) -> ConfigMapVolume:
    return ConfigMapVolume(tmp_path / "config")


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()


async def test_a_configmap_symlink_swap_is_loaded_and_swapped_in(
        volume: ConfigMapVolume) -> None:
    first, second = manifest_bytes(1), manifest_bytes(2)
    volume.publish({MANIFEST: first})
    changes: list[str] = []

    async def on_change(manifest: object) -> None:
        changes.append(manifest.digest)  # type: ignore[attr-defined]

    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                              on_change=on_change, events=False) as watcher:
        old = watcher.manifest
        assert watcher.status.digest == digest_of(first)
        assert await watcher.check_now() == "unchanged"
        volume.publish({MANIFEST: second})
        # Only ..data changed in the directory; the manifest's own link is untouched.
        assert os.readlink(volume.manifest) == os.path.join("..data", MANIFEST)
        assert await watcher.check_now() == "accepted"
        status = watcher.status
        assert watcher.manifest is not old and watcher.manifest.digest == digest_of(second)
        assert (status.digest, status.reloads_accepted, status.reloads_rejected) == (
            digest_of(second), 1, 0)
        assert status.loaded_at.tzinfo is not None and status.mode == "polling"
        assert changes == [digest_of(second)]
        assert await watcher.check_now() == "unchanged"


async def test_a_bad_version_keeps_the_last_good_and_is_logged_once(
        volume: ConfigMapVolume, caplog: pytest.LogCaptureFixture) -> None:
    good = manifest_bytes(1)
    volume.publish({MANIFEST: good})
    tampered = manifest_bytes(2).replace(b"version 2", b"version 3")  # digest no longer holds
    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                              events=False) as watcher:
        kept = watcher.manifest
        volume.publish({MANIFEST: tampered})
        with caplog.at_level(logging.ERROR, logger="compiler.runtime.fleet.watch"):
            assert await watcher.check_now() == "rejected"
            # Seen again (a new folder with the same bytes): not counted, not logged again.
            volume.publish({MANIFEST: tampered})
            assert await watcher.check_now() == "rejected"
        assert watcher.manifest is kept
        status = watcher.status
        assert (status.digest, status.reloads_rejected, status.reloads_accepted) == (
            digest_of(good), 1, 0)
        assert status.last_rejection is not None
        assert status.last_rejection.check == "digest"
        assert "changed after it was compiled" in status.last_rejection.reason
        logged = [r for r in caplog.records if r.name == "compiler.runtime.fleet.watch"]
        assert len(logged) == 1 and digest_of(good) in logged[0].getMessage()
        # A good version after a bad one is accepted; the last rejection stays on record.
        volume.publish({MANIFEST: manifest_bytes(4)})
        assert await watcher.check_now() == "accepted"
        assert watcher.status.last_rejection == status.last_rejection


async def test_an_unknown_manifest_version_is_refused_by_name(volume: ConfigMapVolume) -> None:
    volume.publish({MANIFEST: manifest_bytes(1)})
    future = manifest_bytes(2).replace(b'"manifest_version": 1', b'"manifest_version": 99')
    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                              events=False) as watcher:
        volume.publish({MANIFEST: future})
        assert await watcher.check_now() == "rejected"
        assert watcher.status.last_rejection is not None
        assert watcher.status.last_rejection.check == "manifest_version"


async def test_signed_versions_need_a_trusted_signature(volume: ConfigMapVolume) -> None:
    key, stranger = new_key(), new_key()
    first, second = manifest_bytes(1), manifest_bytes(2)
    volume.publish({MANIFEST: first, f"{MANIFEST}.sig": signature_bytes(first, key)})
    async with watch_manifest(volume.manifest, trusted_keys=[key.public_text],
                              registry=ToolRegistry(), interval=NEVER,
                              events=False) as watcher:
        volume.publish({MANIFEST: second, f"{MANIFEST}.sig": signature_bytes(second, stranger)})
        assert await watcher.check_now() == "rejected"
        rejection = watcher.status.last_rejection
        assert rejection is not None and rejection.check == "signature"
        assert "not a trusted key" in rejection.reason
        assert watcher.manifest.digest == digest_of(first)
        volume.publish({MANIFEST: second, f"{MANIFEST}.sig": signature_bytes(second, key)})
        assert await watcher.check_now() == "accepted"
        assert watcher.manifest.digest == digest_of(second)


async def test_a_signature_that_arrives_after_its_manifest_is_then_accepted(
        tmp_path: Path) -> None:
    # A plain directory written file by file (a volume synced by a sidecar, say).
    folder = tmp_path / "plain"
    folder.mkdir()
    key = new_key()
    first, second = manifest_bytes(1), manifest_bytes(2)
    manifest, signature = folder / MANIFEST, folder / f"{MANIFEST}.sig"
    manifest.write_bytes(first)
    signature.write_bytes(signature_bytes(first, key))
    async with watch_manifest(manifest, trusted_keys=[key.public_text], registry=ToolRegistry(),
                              interval=NEVER, events=False) as watcher:
        manifest.write_bytes(second)
        assert await watcher.check_now() == "rejected"
        rejection = watcher.status.last_rejection
        assert rejection is not None and "signature is for the manifest" in rejection.reason
        signature.write_bytes(signature_bytes(second, key))
        assert await watcher.check_now() == "accepted"
        assert watcher.status.digest == digest_of(second)
        assert watcher.status.reloads_rejected == 1


async def test_an_expected_digest_pins_every_version(volume: ConfigMapVolume) -> None:
    first = manifest_bytes(1)
    volume.publish({MANIFEST: first})
    async with watch_manifest(volume.manifest, expected_digest=digest_of(first),
                              registry=ToolRegistry(), interval=NEVER, events=False) as watcher:
        volume.publish({MANIFEST: manifest_bytes(2)})
        assert await watcher.check_now() == "rejected"
        assert watcher.status.last_rejection is not None
        assert watcher.status.last_rejection.check == "digest"


async def test_a_bad_first_version_fails_the_start_and_leaves_nothing_running(
        volume: ConfigMapVolume) -> None:
    key = new_key()
    volume.publish({MANIFEST: manifest_bytes(1)})
    with pytest.raises(SignatureRefused) as refused:
        async with watch_manifest(volume.manifest, trusted_keys=[key.public_text],
                                  registry=ToolRegistry(), interval=NEVER, events=False):
            pass
    assert refused.value.check == "signature"
    with pytest.raises(ManifestError) as missing:
        async with watch_manifest(volume.root / "absent.json", registry=ToolRegistry(),
                                  interval=NEVER, events=False):
            pass
    assert missing.value.check == "read" and "missing" in missing.value.detail


async def test_the_background_poll_picks_up_a_new_version(volume: ConfigMapVolume) -> None:
    volume.publish({MANIFEST: manifest_bytes(1)})
    arrived: asyncio.Queue[str] = asyncio.Queue()

    async def on_change(manifest: object) -> None:
        await arrived.put(manifest.digest)  # type: ignore[attr-defined]

    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=0.01,
                              on_change=on_change, events=False):
        second = manifest_bytes(2)
        volume.publish({MANIFEST: second})
        assert await asyncio.wait_for(arrived.get(), 30) == digest_of(second)


async def test_directory_events_wake_the_watcher_when_watchfiles_is_installed(
        volume: ConfigMapVolume) -> None:
    pytest.importorskip("watchfiles")
    volume.publish({MANIFEST: manifest_bytes(1)})
    arrived: asyncio.Queue[str] = asyncio.Queue()

    async def on_change(manifest: object) -> None:
        await arrived.put(manifest.digest)  # type: ignore[attr-defined]

    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                              on_change=on_change, events=True) as watcher:
        assert watcher.status.mode == "events"
        versions = [manifest_bytes(1), manifest_bytes(2)]
        digest = None
        # The watch may begin after the first swap: swap versions until one is seen. Only
        # an event can wake the watcher: its poll interval is an hour.
        for _ in range(120):
            volume.publish({MANIFEST: versions[volume.generation % 2]})
            try:
                digest = await asyncio.wait_for(arrived.get(), 0.5)
                break
            except TimeoutError:
                continue
        assert digest in {digest_of(version) for version in versions}
        assert watcher.status.reloads_accepted >= 1


def test_a_plain_script_uses_the_watcher_with_with(volume: ConfigMapVolume) -> None:
    volume.publish({MANIFEST: manifest_bytes(1)})
    threads = capc_threads()
    with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                        events=False) as watcher:
        volume.publish({MANIFEST: manifest_bytes(2)})
        assert watcher.check_now_sync() == "accepted"
        with watcher.lease() as manifest:
            assert manifest.digest == digest_of(manifest_bytes(2))
    assert capc_threads() == threads  # the watcher's loop and worker threads are gone


def test_the_status_is_json_for_a_health_endpoint(volume: ConfigMapVolume) -> None:
    volume.publish({MANIFEST: manifest_bytes(1)})
    with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                        events=False) as watcher:
        volume.publish({MANIFEST: b"{"})
        assert watcher.check_now_sync() == "rejected"
        shown = watcher.status.to_json()
    assert shown["digest"] == digest_of(manifest_bytes(1))
    assert shown["reloads_rejected"] == 1 and shown["last_rejection"]["check"] == "json"
    assert __import__("json").dumps(shown)
