"""An event loop whose clock jumps over waits, so a replayed retry never sleeps.

A replayed call runs the real retry code: ``Retry-After: 2`` still schedules a wait of two
seconds, and the tool's deadline is still measured against the loop's clock. On this
loop, when nothing is ready to run, no I/O is pending and no executor job is running, the
clock moves straight to the next timer instead of waiting for it. Every decision the
retry code makes (wait or give up, which attempt comes next, whether the timeout ran out)
is the one it makes live; only the waiting is gone. A job on a thread (shaping of a large
reply) makes the loop wait for real, so a jump never fires a deadline under a running job.
"""

from __future__ import annotations

import asyncio
import selectors
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, TypeVar

_T = TypeVar("_T")


class _JumpingSelector(selectors.BaseSelector):
    """A selector that, asked to wait on an idle loop, moves the loop's clock instead."""

    def __init__(self, loop: FastForwardLoop) -> None:
        self._inner = selectors.DefaultSelector()
        self._loop = loop

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """Watch ``fileobj`` (the real selector does)."""
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        """Stop watching ``fileobj``."""
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """Change what is watched for ``fileobj``."""
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """What is ready; an idle wait of ``timeout`` moves the loop's clock instead."""
        ready = self._inner.select(0)
        if ready or timeout is None or timeout <= 0 or self._loop.busy():
            return ready if ready or timeout == 0 else self._inner.select(timeout)
        self._loop.advance(timeout)
        return []

    def close(self) -> None:
        """Close the real selector."""
        self._inner.close()

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        """The real selector's map."""
        return self._inner.get_map()


class FastForwardLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` skips the waits of an idle loop."""

    def __init__(self) -> None:
        self._skipped = 0.0
        self._jobs = 0
        self._jobs_lock = threading.Lock()
        super().__init__(selector=_JumpingSelector(self))

    def time(self) -> float:
        """The monotonic clock plus every wait skipped so far."""
        return super().time() + self._skipped

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` ahead (the loop was idle that long, virtually)."""
        self._skipped += seconds

    def busy(self) -> bool:
        """True while a job of ``run_in_executor`` runs: then waits are real."""
        return self._jobs > 0

    def run_in_executor(  # type: ignore[override]
        self, executor: Executor | None, func: Callable[..., _T], *args: Any
    ) -> asyncio.Future[_T]:
        """The base behaviour, with the job counted until its result is in the loop."""
        future = super().run_in_executor(executor, func, *args)
        with self._jobs_lock:
            self._jobs += 1

        def finished(_: asyncio.Future[_T]) -> None:
            with self._jobs_lock:
                self._jobs -= 1

        future.add_done_callback(finished)
        return future
