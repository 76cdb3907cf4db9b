"""``options.max_concurrency``: at most N calls of one tool in flight per loaded manifest.

An ``asyncio.Semaphore`` belongs to one event loop, and one manifest may serve several: an
agent's loop, and the private loop a synchronous ``invoke`` runs in (from a notebook cell,
a thread). This limiter counts under a thread lock and wakes each waiter on its own loop,
so the limit holds across all of them. Waiters are served first come, first served.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator


class CallLimiter:
    """A semaphore of ``limit`` slots shared by every event loop of the process."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {limit}")
        self._limit = limit
        self._in_flight = 0
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def limit(self) -> int:
        """The most calls in flight at once."""
        return self._limit

    @property
    def in_flight(self) -> int:
        """Slots taken now (for tests and diagnostics)."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Calls queued for a slot now (for tests and diagnostics)."""
        return len(self._waiters)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the block; waits (cancellably) while all are taken."""
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_flight < self._limit and not self._waiters:
                self._in_flight += 1
                return
            waiter: asyncio.Future[None] = loop.create_future()
            entry = (loop, waiter)
            self._waiters.append(entry)
        try:
            await waiter
        except BaseException:
            with self._lock:
                if entry in self._waiters:  # still queued: nothing was handed over
                    self._waiters.remove(entry)
                    raise
            # The slot was handed over as this waiter gave up. A cancelled future means
            # the hand-over callback has not run yet: it will pass the slot on itself.
            if not waiter.cancelled():
                self._release()
            raise

    def _release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, waiter = self._waiters.popleft()
                try:
                    # The slot moves to the waiter as it is: in_flight stays the same.
                    loop.call_soon_threadsafe(self._hand_over, waiter)
                    return
                except RuntimeError:
                    continue  # that waiter's loop is closed: it will never run again
            self._in_flight -= 1

    def _hand_over(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # the waiter gave up meanwhile: pass the slot on
            self._release()
        else:
            waiter.set_result(None)
