"""Reading a manifest or signature file: a regular file only, and never more than a bound.

Every reader of a manifest or ``.sig`` goes through :func:`read_regular_file`. The file is
opened without blocking and checked after opening (so a FIFO never blocks ``open`` waiting
for a writer, and a file swapped between a check and the open cannot slip through), and
at most ``limit`` bytes are read (``/dev/zero`` is refused as a device, a huge regular file
by its size).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Far above any real manifest (2,000 capabilities compile to a few MB), far below memory.
MAX_MANIFEST_BYTES = 256 * 1024 * 1024


class UnreadableFile(OSError):
    """A file that is not a regular file, is larger than its bound, or cannot be read."""


class FileTooLarge(UnreadableFile):
    """A regular file larger than the bound its reader sets."""


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``; UnreadableFile says why not."""
    try:
        descriptor = os.open(Path(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise UnreadableFile(error.errno, error.strerror or str(error)) from None
    # Checked before fdopen: fdopen of a directory raises IsADirectoryError naming the fd.
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise UnreadableFile(0, kind)
    with os.fdopen(descriptor, "rb", buffering=0) as stream:
        if info.st_size > limit:
            raise FileTooLarge(0, f"larger than {limit} bytes")
        chunks = []
        remaining = limit + 1  # one more byte than allowed tells a file that grew
        while remaining > 0:
            chunk = stream.read(min(remaining, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    content = b"".join(chunks)
    if len(content) > limit:
        raise FileTooLarge(0, f"larger than {limit} bytes")
    return content
