"""What the manifest watcher reads: a bounded snapshot of the file and a cheap fingerprint.

A Kubernetes ConfigMap volume updates by writing a new timestamped directory and swapping
the ``..data`` symlink, so the manifest's path keeps its name while the file behind it
changes. The fingerprint therefore follows symlinks and takes the identity of what is
behind the path (device, inode, size, modification and change times) plus the same for
the signature file: a new file, a rewrite in place, a file set back to an older time (a
writer whose clock jumped) or a signature that arrives later all change it, without
reading a byte.

A file system stamps times at a coarse tick (a few milliseconds), and a rename may reuse
the inode just freed, so two same-size versions written within one tick can have equal
fingerprints. As git does for "racily clean" files, a fingerprint whose newest time is
within ``RACY_WINDOW_NS`` of the clock when it was taken is not trusted: the next poll
reads the bytes and compares their hash. A clock set back makes times look recent: the
safe side (one more read).

The snapshot is read through one descriptor opened without blocking (a FIFO put in the
manifest's place cannot hang the watcher) and refused unless it is a regular file; it
reads at most ``max_bytes + 1`` bytes, so a file that keeps growing costs a bounded read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

# What a poll compares: (device, inode, size, mtime_ns, ctime_ns) or an error's errno.
FileIdentity = tuple[int, ...]

READ_CHUNK_BYTES = 1 << 20
RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The identity of the manifest file and of its signature file, taken by ``stat``."""

    manifest: FileIdentity
    signature: FileIdentity | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The manifest bytes as read once, and the fingerprint taken before reading them."""

    raw: bytes
    sha256: str
    fingerprint: Fingerprint


class SnapshotRefused(Exception):
    """The file cannot be read as a manifest; the message says why, for the status."""

    def __init__(self, kind: str, reason: str, fingerprint: Fingerprint) -> None:
        super().__init__(reason)
        self.kind = kind  # missing, loop, directory, special, too_large, unreadable
        self.reason = reason
        self.fingerprint = fingerprint


def fingerprint(path: Path, signature_path: Path | None) -> Fingerprint:
    """The current fingerprint of ``path`` (and ``signature_path``); never raises."""
    return Fingerprint(_identity(path), None if signature_path is None
                       else _identity(signature_path))


def is_racy(seen: Fingerprint, now_ns: int) -> bool:
    """Whether a file of ``seen`` changed so recently that its stat may hide a rewrite."""
    for identity in (seen.manifest, seen.signature):
        if identity is not None and len(identity) > 4:
            newest = max(identity[3], identity[4])  # modification and change times
            if now_ns - newest < RACY_WINDOW_NS:
                return True
    return False


def read_snapshot(path: Path, signature_path: Path | None, max_bytes: int) -> Snapshot:
    """The bytes of ``path``, at most ``max_bytes``; SnapshotRefused says what went wrong."""
    signature = None if signature_path is None else _identity(signature_path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise _refused(error, signature) from None
    try:
        info = os.fstat(descriptor)
        seen = Fingerprint(_of(info), signature)
        if stat.S_ISDIR(info.st_mode):
            raise SnapshotRefused("directory", "the manifest path is a directory", seen)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotRefused("special", "the manifest path is not a regular file "
                                  "(a device, FIFO or socket)", seen)
        if info.st_size > max_bytes:
            raise SnapshotRefused("too_large", _too_large(info.st_size, max_bytes), seen)
        raw = _read_at_most(descriptor, max_bytes + 1)
    except OSError as error:
        raise _refused(error, signature) from None
    finally:
        os.close(descriptor)
    if len(raw) > max_bytes:
        # It grew while being read: whatever it becomes, only max_bytes were ever held.
        raise SnapshotRefused("too_large", _too_large(len(raw), max_bytes), seen)
    return Snapshot(raw, hashlib.sha256(raw).hexdigest(), seen)


def _read_at_most(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(descriptor, min(READ_CHUNK_BYTES, left))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _identity(path: Path) -> FileIdentity:
    try:
        return _of(os.stat(path))
    except OSError as error:
        return (-(error.errno or 0),)


def _of(info: os.stat_result) -> FileIdentity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
            stat.S_IFMT(info.st_mode))


def _too_large(size: int, max_bytes: int) -> str:
    return f"the manifest is larger than max_manifest_bytes ({size} > {max_bytes} bytes)"


def _refused(error: OSError, signature: FileIdentity | None) -> SnapshotRefused:
    seen = Fingerprint((-(error.errno or 0),), signature)
    if error.errno == errno.ENOENT:
        return SnapshotRefused(
            "missing", "the manifest file is missing (deleted, or a dangling symlink)", seen)
    if error.errno == errno.ELOOP:
        return SnapshotRefused("loop", "the manifest path is a symlink loop", seen)
    if error.errno == errno.EISDIR:
        return SnapshotRefused("directory", "the manifest path is a directory", seen)
    reason = f"the manifest cannot be read: {error.strerror or type(error).__name__}"
    return SnapshotRefused("unreadable", reason, seen)
