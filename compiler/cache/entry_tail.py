"""A cache entry whose tail stays in its file: verified whole, then read piece by piece.

The entries' bytes of a large tree (compiler/cache/entry_fragments.py) are hundreds of
megabytes: :meth:`CompileCache.read_entry` would hold them all (and a copy while reading)
for the whole compile, though the manifest only needs each piece once, when it is hashed
or written. :func:`read_entry_in_place` authenticates the entry as ``read_entry`` does
(magic, selector, then the HMAC over everything it covers, before ``marshal`` reads a
byte), reading the file a few MiB at a time, and keeps the opened descriptor: the tail is
then a :class:`TailFile`, whose slices are :class:`Span` s read (``pread``) when wanted.

Why a later read gives the verified bytes: entries are never written in place. Each is
written to a new temporary file and renamed over the old one (store.py), so a compile
replacing the entry meanwhile gives the path a new file and leaves the opened one as it
was; changing the opened file's bytes takes write access to it (mode 0600, the user's
own), which also reads the key. A read that comes back short (the file was truncated by
its owner) raises OSError: the manifest's writer then removes its temporary file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from compiler.cache.store import CompileCache

_RUN = 8 * 1024 * 1024  # the HMAC is computed over reads of this size
MAX_IN_PLACE_BYTES = 8 * 1024 * 1024 * 1024
"""An entry read in place larger than this is not read. Above store.MAX_ENTRY_BYTES (the
bound of an entry read whole, and of the marshal part here): the tail is never held, and
the entries' bytes of an import of Microsoft Graph (11,000 files) are 700 MB."""
_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class _Opened:
    """An open descriptor, closed when the last span of its file is gone."""

    __slots__ = ("handle",)

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def read(self, start: int, size: int) -> bytes:
        """``size`` bytes from ``start`` (OSError when the file holds fewer)."""
        data = os.pread(self.handle, size, start)
        while len(data) < size:  # a regular file reads whole but at its end; be sure
            more = os.pread(self.handle, size - len(data), start + len(data))
            if not more:
                raise OSError(f"a cache entry is shorter than when it was verified "
                              f"({start + len(data)} < {start + size} bytes)")
            data += more
        return data

    def __del__(self, close: Callable[[int], None] = os.close) -> None:
        close(self.handle)  # (bound early: this may run as the interpreter exits)


class _Held:
    """An entry's bytes read whole (where ``os.pread`` is missing: Windows), as an
    :class:`_Opened` file's (the tail starts after the marshal part there too)."""

    __slots__ = ("_content",)

    def __init__(self, content: bytes) -> None:
        self._content = content

    def read(self, start: int, size: int) -> bytes:
        return self._content[start:start + size]


class Span:
    """Bytes ``start`` to ``stop`` of a verified entry's file, read when wanted."""

    __slots__ = ("_opened", "start", "stop")

    def __init__(self, opened: _Opened | _Held, start: int, stop: int) -> None:
        self._opened = opened
        self.start = start
        self.stop = stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __bytes__(self) -> bytes:
        return self._opened.read(self.start, self.stop - self.start)


class TailFile:
    """An entry's tail left in its file; a slice (by byte offsets, step 1) is a
    :class:`Span`, its length is the tail's."""

    __slots__ = ("_opened", "_size", "_start")

    def __init__(self, opened: _Opened | _Held, start: int, size: int) -> None:
        self._opened = opened
        self._start = start
        self._size = size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, part: slice) -> Span:
        start, stop, step = part.indices(self._size)
        if step != 1:
            raise ValueError("a tail is sliced with step 1 only")
        return Span(self._opened, self._start + start, self._start + max(start, stop))


# The made bytes a compile holds before it spools the rest: a bench-sized tree's (a few
# MB) never reach a file, where a write and a read per piece would cost a cold compile of
# 2,000 files some 8,000 system calls; Microsoft Graph's 700 MB go there past this.
SPOOL_FROM = 32 * 1024 * 1024


class Spool:
    """Bytes a compile made and needs again only once it writes them (its new entries'
    bytes: 700 MB for Microsoft Graph): the first :data:`SPOOL_FROM` bytes held as they
    are, the rest moved to an unnamed file in ``folder`` (the cache's) and kept as
    :class:`Span` s of it; held as they are where the file cannot be made or written, or
    positioned reads are missing. The file goes with its last span."""

    __slots__ = ("_folder", "_held", "_opened", "_size")

    def __init__(self, folder: Path | None, held: int | None = None) -> None:
        self._folder = folder  # None: nowhere to spool, every piece is kept as it is
        self._opened: _Opened | None = None
        self._size = 0
        # What may still be held before spooling starts (default: SPOOL_FROM).
        self._held = SPOOL_FROM if held is None else held

    def keep(self, data: bytes | memoryview) -> bytes | memoryview | Span:
        """``data``, or the span of the spool it was written to."""
        if len(data) <= self._held:
            self._held -= len(data)
            return data
        self._held = 0  # past the budget, every later piece is spooled, however small
        try:
            if self._opened is None:
                if self._folder is None or not hasattr(os, "pread"):
                    return data
                self._opened = _unnamed_file(self._folder)
            start = self._size
            written = 0
            while written < len(data):
                written += os.pwrite(self._opened.handle, data[written:], start + written)
        except OSError:
            self._folder = None  # (one failure: the rest is kept as it is too)
            return data
        self._size += len(data)
        return Span(self._opened, start, self._size)


def _unnamed_file(folder: Path) -> _Opened:
    """A new file in ``folder``, open for reading and writing, its name already removed
    (compiler/atomic.py: no ``tempfile`` in a compile)."""
    from compiler.atomic import create_temporary

    folder.mkdir(parents=True, exist_ok=True)
    handle, name = create_temporary(folder, ".spool.")
    opened = _Opened(handle)  # closed when its last span is gone (or now, should unlink fail)
    os.unlink(name)
    return opened


def resolved(piece: bytes | memoryview | Span) -> bytes | memoryview:
    """The bytes of ``piece`` (read now when it is a :class:`Span`)."""
    return bytes(piece) if isinstance(piece, Span) else piece


class ResolvedPieces(Sequence["bytes | memoryview"]):
    """Pieces some of which are spans, each read when it is taken: iterating them holds
    one piece at a time (a list of them would hold the whole file)."""

    __slots__ = ("_pieces",)

    def __init__(self, pieces: Sequence[bytes | memoryview | Span]) -> None:
        self._pieces = pieces

    def __len__(self) -> int:
        return len(self._pieces)

    @overload
    def __getitem__(self, index: int) -> bytes | memoryview: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[bytes | memoryview]: ...

    def __getitem__(self, index: int | slice) -> bytes | memoryview | Sequence[
            bytes | memoryview]:
        if isinstance(index, slice):
            return ResolvedPieces(self._pieces[index])
        return resolved(self._pieces[index])

    def __iter__(self) -> Iterator[bytes | memoryview]:
        return map(resolved, self._pieces)


def read_entry_in_place(store: CompileCache, kind: str, selector: bytes | None
                        ) -> tuple[Any, TailFile] | None:
    """:meth:`CompileCache.read_entry` with the tail left in the file (see the module);
    None when that would give None."""
    from compiler.cache.store import MAX_ENTRY_BYTES, entry_payload

    if not store.reads:
        return None
    if not hasattr(os, "pread"):  # no positioned reads: the entry is read whole
        whole = store.read_entry(kind, selector)
        return None if whole is None else (whole[0], TailFile(_Held(whole[1]), 0, len(whole[1])))
    path = store.directory / f"{store.tree_identity}.{kind}"
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # not even opened (a FIFO, a device)
            return None
        opened = _Opened(os.open(path, _FLAGS))
        status = os.fstat(opened.handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_IN_PLACE_BYTES:
            return None
        parts = _verified(store, kind, opened, status.st_size, selector)
        if parts is None or parts[0][1] > MAX_ENTRY_BYTES:  # the part read whole is bounded
            return None
        head = opened.read(*parts[0])
    except OSError:
        return None
    payload = entry_payload(head)
    return None if payload is None else (payload[0], TailFile(opened, *parts[1]))


def _verified(store: CompileCache, kind: str, opened: _Opened, size: int,
              selector: bytes | None) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Where the marshal part and the tail are (start, size each) when the entry answers
    ``selector`` (None: any) and its HMAC verifies (:meth:`CompileCache.unseal`'s rules)."""
    import hmac

    from compiler.cache.store import ENTRY_HEADER, ENTRY_MAGIC, MAC_BYTES

    start = len(ENTRY_MAGIC) + MAC_BYTES
    if size < start + ENTRY_HEADER.size:
        return None
    front = opened.read(0, start + ENTRY_HEADER.size)
    if not front.startswith(ENTRY_MAGIC):
        return None
    found, head_size = ENTRY_HEADER.unpack_from(front, start)
    body = start + ENTRY_HEADER.size
    if (selector is not None and found != selector) or body + head_size > size:
        return None
    signed = store.signer(kind)
    for at in range(start, size, _RUN):
        signed.update(opened.read(at, min(_RUN, size - at)))
    if not hmac.compare_digest(front[len(ENTRY_MAGIC):start], signed.digest()):
        return None
    return (body, head_size), (body + head_size, size - body - head_size)
