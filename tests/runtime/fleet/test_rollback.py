"""watch_manifest refuses an older signed release (SPEC §13), on a real ConfigMap-style swap.

The order is the signing time carried inside the signature (v2 ``.sig``); the manifests
are real sealed manifests signed with real Ed25519 keys, independently of capc's signer
(``tests.support.signing``) and through capc's own (``compiler.signing.SigningKey``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from compiler.runtime import ToolRegistry, watch_manifest
from compiler.runtime.fleet.watch import ManifestWatcher
from compiler.runtime.manifest.signature import PublicKey
from compiler.signing import SigningKey
from tests.runtime.fleet.support import (
    MANIFEST,
    ConfigMapVolume,
    digest_of,
    manifest_bytes,
    signature_bytes,
)
from tests.support.signing import KeyPair, new_key

NEVER = 3600.0  # a poll interval no test waits for
SIG = f"{MANIFEST}.sig"
MONDAY = "2026-11-30T09:00:00.000000Z"
TUESDAY = "2026-12-01T09:00:00.000000Z"
WEDNESDAY = "2026-12-02T09:00:00.000000Z"


@pytest.fixture
def volume(tmp_path: Path) -> ConfigMapVolume:
    (tmp_path / "config").mkdir()
    return ConfigMapVolume(tmp_path / "config")


def release(version: int, key: KeyPair, signed_at: str | None) -> dict[str, bytes]:
    raw = manifest_bytes(version)
    return {MANIFEST: raw, SIG: signature_bytes(raw, key, signed_at)}


def watch(volume: ConfigMapVolume, keys: list[str], allow_rollback: bool = False
          ) -> ManifestWatcher:
    return watch_manifest(volume.manifest, trusted_keys=keys, registry=ToolRegistry(),
                          interval=NEVER, events=False, allow_rollback=allow_rollback)


async def test_an_older_signed_release_is_refused_and_the_status_names_both_times(
        volume: ConfigMapVolume, caplog: pytest.LogCaptureFixture) -> None:
    key = new_key()
    volume.publish(release(2, key, TUESDAY))
    async with watch(volume, [key.public_text]) as watcher:
        served = watcher.manifest
        assert watcher.status.signed_at == datetime(2026, 12, 1, 9, tzinfo=UTC)
        volume.publish(release(1, key, MONDAY))  # a genuine, older signature
        with caplog.at_level(logging.ERROR, logger="compiler.runtime.fleet.watch"):
            assert await watcher.check_now() == "rejected"
        assert watcher.manifest is served
        rejection = watcher.status.last_rejection
        assert rejection is not None and rejection.check == "rollback"
        assert MONDAY in rejection.reason and TUESDAY in rejection.reason
        assert "allow_rollback=True" in rejection.reason
        assert watcher.status.to_json()["last_rejection"]["check"] == "rollback"
        assert any("rollback refused" in record.getMessage() for record in caplog.records)
        volume.publish(release(3, key, WEDNESDAY))  # a newer release still goes through
        assert await watcher.check_now() == "accepted"
        assert watcher.status.digest == digest_of(manifest_bytes(3))
        assert watcher.status.to_json()["signed_at"] == "2026-12-02T09:00:00+00:00"


async def test_allow_rollback_accepts_the_older_release_and_says_so(
        volume: ConfigMapVolume, caplog: pytest.LogCaptureFixture) -> None:
    key = new_key()
    volume.publish(release(2, key, TUESDAY))
    async with watch(volume, [key.public_text], allow_rollback=True) as watcher:
        volume.publish(release(1, key, MONDAY))
        with caplog.at_level(logging.WARNING, logger="compiler.runtime.fleet.watch"):
            assert await watcher.check_now() == "accepted"
        assert watcher.status.digest == digest_of(manifest_bytes(1))
        assert watcher.status.reloads_rejected == 0
        warned = [record.getMessage() for record in caplog.records
                  if record.levelno == logging.WARNING]
        assert any("allow_rollback" in line and MONDAY in line for line in warned)


async def test_a_signature_without_a_time_is_refused_once_an_ordered_one_is_served(
        volume: ConfigMapVolume) -> None:
    key = new_key()
    volume.publish(release(1, key, None))  # signed by an earlier capc: no order
    async with watch(volume, [key.public_text]) as watcher:
        assert watcher.status.signed_at is None
        volume.publish(release(2, key, None))  # nothing ordered served: accepted as before
        assert await watcher.check_now() == "accepted"
        volume.publish(release(3, key, MONDAY))
        assert await watcher.check_now() == "accepted"
        volume.publish(release(2, key, None))  # could be any old release now
        assert await watcher.check_now() == "rejected"
        rejection = watcher.status.last_rejection
        assert rejection is not None and rejection.check == "rollback"
        assert "no signing time" in rejection.reason and MONDAY in rejection.reason
        assert watcher.status.digest == digest_of(manifest_bytes(3))


async def test_without_trusted_keys_nothing_is_ordered(volume: ConfigMapVolume) -> None:
    key = new_key()
    volume.publish(release(2, key, TUESDAY))
    async with watch_manifest(volume.manifest, registry=ToolRegistry(), interval=NEVER,
                              events=False) as watcher:
        volume.publish(release(1, key, MONDAY))
        assert await watcher.check_now() == "accepted"


async def test_capc_signatures_order_releases(volume: ConfigMapVolume) -> None:
    keys = new_key()
    signer = SigningKey("test", PublicKey(bytes.fromhex(_raw_hex(keys))), keys.private_key)
    newer, older = manifest_bytes(2), manifest_bytes(1)
    later = signer.sign(digest_of(newer), datetime(2026, 12, 1, 9, tzinfo=UTC))
    earlier = signer.sign(digest_of(older), datetime(2026, 11, 30, 9, tzinfo=UTC))
    volume.publish({MANIFEST: newer, SIG: later.to_bytes()})
    async with watch(volume, [keys.public_text]) as watcher:
        volume.publish({MANIFEST: older, SIG: earlier.to_bytes()})
        assert await watcher.check_now() == "rejected"
        rejection = watcher.status.last_rejection
        assert rejection is not None and rejection.check == "rollback"


async def test_trusted_key_files_are_read_once_when_the_watch_starts(
        volume: ConfigMapVolume, tmp_path: Path) -> None:
    original, replacement = new_key(), new_key()
    key_file = tmp_path / "trusted.pub.pem"
    key_file.write_bytes(original.public_pem)
    volume.publish(release(1, original, MONDAY))
    async with watch(volume, [str(key_file)]) as watcher:
        key_file.write_bytes(replacement.public_pem)  # someone swaps the trusted key
        volume.publish(release(2, replacement, TUESDAY))
        assert await watcher.check_now() == "rejected"
        rejection = watcher.status.last_rejection
        assert rejection is not None and rejection.check == "signature"
        assert "not a trusted key" in rejection.reason
        volume.publish(release(3, original, WEDNESDAY))  # the key read at start still holds
        assert await watcher.check_now() == "accepted"


def _raw_hex(keys: KeyPair) -> str:
    from cryptography.hazmat.primitives import serialization

    return keys.private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
