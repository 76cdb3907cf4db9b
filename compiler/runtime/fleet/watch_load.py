"""One version of a watched manifest, loaded in the watcher's worker thread.

``load_version`` reads the file (bounded, :mod:`compiler.runtime.fleet.watch_source`),
verifies it completely (JSON, version, digest, signature, release order) and builds the
Manifest, or raises :class:`Refused` with the check, the reason and what identifies the
bad version; :mod:`compiler.runtime.fleet.watch` swaps what it returns in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.runtime.errors import ManifestError
from compiler.runtime.fleet.watch_order import ROLLBACK_CHECK, order_problem
from compiler.runtime.fleet.watch_source import (
    Fingerprint,
    Snapshot,
    SnapshotRefused,
    read_snapshot,
)
from compiler.runtime.loader import Manifest, verify_origin
from compiler.runtime.manifest.read import manifest_from_bytes
from compiler.runtime.tools.plugin_drift import log_plugin_drift
from compiler.runtime.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from compiler.runtime.manifest.signature import PublicKey


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """How a watcher loads each version: ``load_manifest``'s options, fixed at the start."""

    path: Path
    trusted_keys: tuple[str | os.PathLike[str] | PublicKey, ...] | None
    expected_digest: str | None
    signature_path: Path | None
    allow_private_networks: bool
    max_upload_bytes: int
    max_manifest_bytes: int
    allow_rollback: bool = False


class Refused(Exception):
    """A version refused in the worker: the check, the reason, and what identifies it."""

    def __init__(self, check: str, reason: str, version: tuple[object, ...],
                 seen: Fingerprint | None) -> None:
        super().__init__(reason)
        self.check, self.reason, self.version, self.seen = check, reason, version, seen


@dataclass(frozen=True, slots=True)
class LoadedVersion:
    """What one load in the worker thread produced: a new manifest, or the same version."""

    snapshot: Snapshot
    manifest: Manifest | None
    signed_at: datetime | None = None  # the verified signature's signing time, if any


@dataclass(frozen=True, slots=True)
class ServedVersion:
    """What the worker compares a new version with: the served digest and signing time."""

    digest: str = ""
    signed_at: datetime | None = None


def load_version(options: WatchOptions, registry: ToolRegistry, served: ServedVersion,
                 seen_sha256: str) -> LoadedVersion:
    """Read, verify and build one version (in the worker thread); ``Refused`` says why not.

    ``seen_sha256``: the bytes last looked at, so an unchanged file is not parsed again.
    """
    current_digest = served.digest
    try:
        snapshot = read_snapshot(options.path, options.signature_path,
                                 options.max_manifest_bytes)
    except SnapshotRefused as refused:
        # One version per kind of failure: a file that keeps growing is one bad version.
        raise Refused("read", refused.reason, ("file", refused.kind),
                      refused.fingerprint) from refused
    if current_digest and snapshot.sha256 == seen_sha256:
        return LoadedVersion(snapshot, None)
    try:
        data = manifest_from_bytes(str(options.path), snapshot.raw)
        if data.digest == current_digest:
            return LoadedVersion(snapshot, None)
        signature = verify_origin(data, options.trusted_keys, options.expected_digest,
                                  options.signature_path)
    except ManifestError as error:
        raise Refused(error.check, str(error), ("manifest", snapshot.sha256, str(error)),
                      snapshot.fingerprint) from error
    signed_at = signature.signed_at if signature is not None else None
    if served.digest and options.trusted_keys is not None:
        rollback = order_problem(str(options.path), served.signed_at, signed_at,
                                 options.allow_rollback)
        if rollback is not None:
            raise Refused(ROLLBACK_CHECK, rollback, ("manifest", snapshot.sha256, rollback),
                          snapshot.fingerprint)
    log_plugin_drift(data.plugins, registry)
    manifest = Manifest(data, registry, options.allow_private_networks,
                        options.max_upload_bytes)
    return LoadedVersion(snapshot, manifest, signed_at)

