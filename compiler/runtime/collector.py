"""Pausing Python's cyclic garbage collector around work that only allocates.

Parsing a manifest, rebuilding a cache entry and compiling a tree each allocate many
objects that live on and make almost no reference cycles: every collection those
allocations trigger walks the whole growing heap and frees nothing. Reference counting
still frees everything else, so memory is the same either way.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(before_resuming: Callable[[], None] | None = None) -> Iterator[None]:
    """Run the block with the collector off, then restore the state it had.

    ``before_resuming`` runs just before a collector that was on is switched back on
    (compiler.build uses it to move the block's objects out of the young generation).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if before_resuming is not None:
                before_resuming()
            gc.enable()
