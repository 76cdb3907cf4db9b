"""Whether a loaded manifest is in use: leases and in-flight tool calls, thread-safe.

A manifest replaced by a reload must not close its connection pools under a call that is
still running (on the event loop or on the sync portal's thread). The watcher *retires*
the old manifest; each time its last user lets go, its idle callback releases the pools.
A tool kept from it may still be called later: that call opens a pool, and letting go
releases it again, so a straggler never fails and an idle retired manifest holds no socket.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compiler.runtime.loader import Manifest


class ManifestUsage:
    """A count of the users of one manifest, and what to do when a retired one is idle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._on_idle: Callable[[], None] | None = None
        self._retired = False

    @property
    def users(self) -> int:
        """Leases and calls holding the manifest now."""
        return self._users

    @property
    def retired(self) -> bool:
        """Whether the manifest was replaced (it closes once idle)."""
        return self._retired

    def acquire(self) -> None:
        """One more user (a lease or a tool call)."""
        with self._lock:
            self._users += 1

    def release(self) -> None:
        """One user fewer; a retired manifest left idle is handed to its idle callback."""
        with self._lock:
            self._users -= 1
            on_idle = self._idle_callback()
        if on_idle is not None:
            on_idle()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the manifest for the duration of the block."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def retire(self, on_idle: Callable[[], None]) -> None:
        """Mark replaced: ``on_idle`` runs now if idle, and whenever the last user leaves."""
        with self._lock:
            self._retired = True
            self._on_idle = on_idle
            ready = self._idle_callback()
        if ready is not None:
            ready()

    def _idle_callback(self) -> Callable[[], None] | None:
        # Called with the lock held; the callback itself runs outside it.
        return self._on_idle if self._users == 0 and self._retired else None


class ManifestLease:
    """A manifest held for a block (``with`` or ``async with``): a reload meanwhile does
    not close it. ``current`` gives the manifest served when the block starts."""

    def __init__(self, current: Callable[[], Manifest]) -> None:
        self._current = current
        self._manifest: Manifest | None = None

    def __enter__(self) -> Manifest:
        manifest = self._current()
        manifest.usage.acquire()
        self._manifest = manifest
        return manifest

    def __exit__(self, *exc_info: object) -> None:
        manifest, self._manifest = self._manifest, None
        if manifest is not None:
            manifest.usage.release()

    async def __aenter__(self) -> Manifest:
        return self.__enter__()

    async def __aexit__(self, *exc_info: object) -> None:
        self.__exit__()
