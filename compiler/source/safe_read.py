"""Read an input file without trusting what kind of file it is.

A path in a pull request can be a symlink to ``/dev/zero`` (endless bytes), a FIFO (a
read that never returns), a device, or a link to a file outside the reviewed tree. Every
input capc reads (sources, ``--vars`` files, cache entries) goes through
:func:`read_regular_file`: the file is opened without blocking (``O_NONBLOCK``: opening
a FIFO with no writer returns at once), checked to be a regular file on the opened
descriptor (so no swap between check and read), and read up to a bound, never whole.
"""

from __future__ import annotations

import os
import stat

from compiler.diagnostics import Code

NOT_REGULAR_FILE = Code("not-regular-file", "a source path is not a regular file")
SOURCE_LINK_OUTSIDE = Code("source-link-outside", "a symlink leads out of the source tree")
CODES = (NOT_REGULAR_FILE, SOURCE_LINK_OUTSIDE)

MAX_SOURCE_BYTES = 1024 * 1024
"""The size cap of a source or ``--vars`` file."""

_SMALLEST_REQUEST = 8192
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class UnsafeFile(Exception):
    """Why a file was not read: a short code and a message fit for a diagnostic."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def read_regular_file(path: str | os.PathLike[str], limit: int, *,
                      follow_symlinks: bool = True, inside: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` + 1 of them.

    Returning ``limit + 1`` bytes tells the caller the file is too large without reading
    more. Raises :class:`UnsafeFile` for a non-regular file (FIFO, device, socket,
    directory; any symlink when ``follow_symlinks`` is false) and for a symlink whose
    target is not below the resolved folder ``inside``; ``OSError`` when unreadable.
    """
    return read_regular_file_status(path, limit, follow_symlinks=follow_symlinks,
                                    inside=inside)[0]


def read_regular_file_status(path: str | os.PathLike[str], limit: int, *,
                             follow_symlinks: bool = True, inside: str | None = None
                             ) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular_file`, with what ``fstat`` said of the opened file before it
    was read (the compile cache's stat index keeps it: no second ``stat`` per file)."""
    link = os.lstat(path)
    if stat.S_ISLNK(link.st_mode):
        if not follow_symlinks:
            raise UnsafeFile(NOT_REGULAR_FILE, "is a symlink, not a regular file")
        if inside is not None and not _below(os.path.realpath(path), inside):
            raise UnsafeFile(SOURCE_LINK_OUTSIDE,
                             "is a symlink leading out of the source tree; it is not read "
                             "(copy the file into the tree instead)")
        target = os.stat(path)
    else:
        target = link
    if not stat.S_ISREG(target.st_mode):
        # Not even opened: opening a device or a FIFO can have effects of its own.
        raise UnsafeFile(NOT_REGULAR_FILE,
                         f"is {_kind(target.st_mode)}, not a regular file; it is not read")
    flags = _OPEN_FLAGS | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    handle = os.open(path, flags)
    try:
        opened = os.fstat(handle)
        if not stat.S_ISREG(opened.st_mode):  # swapped between the check and the open
            raise UnsafeFile(NOT_REGULAR_FILE,
                             f"is {_kind(opened.st_mode)}, not a regular file; it is not read")
        chunks: list[bytes] = []
        remaining = limit + 1
        # Requests sized to the file (one byte more shows its end; a file that grows is
        # read on, never past the bound): a fixed 1 MiB request had the allocator map and
        # unmap a megabyte per read, which tripled the cost of reading a tree of small files.
        request = max(opened.st_size + 1, _SMALLEST_REQUEST)
        while remaining > 0:
            chunk = os.read(handle, min(remaining, request))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            if len(chunk) == opened.st_size == limit + 1 - remaining:
                # All fstat said the file holds, from a request one byte larger: its end,
                # without a read that returns nothing (a syscall per file of a tree).
                break
        return b"".join(chunks), opened
    finally:
        os.close(handle)


def _below(real: str, folder: str) -> bool:
    base = folder.rstrip(os.sep) + os.sep
    return real.startswith(base)
