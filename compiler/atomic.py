"""New files created exclusively beside their target, for replace-in-one-step writes, and
the runs of bytes written to them.

What ``tempfile.mkstemp`` does for the manifest, the cache entries and the cache key,
without importing ``tempfile`` (and with it ``shutil``, ``random`` and the compression
modules) into every compile: a random name, ``O_CREAT | O_EXCL`` (never an existing file,
never through a symbolic link), mode 0600, retried on the rare name clash.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_ATTEMPTS = 100


def create_temporary(folder: Path, prefix: str, suffix: str = "") -> tuple[int, str]:
    """A new, empty file in ``folder`` only this process can have opened: (descriptor, path).

    The caller writes it, then ``os.replace``-s it onto the target (or unlinks it).
    OSError when ``folder`` cannot hold a new file.
    """
    for _ in range(_ATTEMPTS):
        # 48 random bits: a clash needs another writer in the same folder and is retried.
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(folder))


def joined_runs(pieces: Iterable[bytes | memoryview], size: int
                ) -> Iterator[bytes | memoryview]:
    """``pieces`` joined in order into runs of about ``size`` bytes, for one write each (a
    piece of that size or more passes as it is): what is held at once stays bounded."""
    batch: list[bytes | memoryview] = []
    held = 0
    for piece in pieces:
        batch.append(piece)
        held += len(piece)
        if held >= size:
            yield batch[0] if len(batch) == 1 else b"".join(batch)
            batch, held = [], 0
    if batch:
        yield batch[0] if len(batch) == 1 else b"".join(batch)
