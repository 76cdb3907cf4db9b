"""Directory events for the manifest watcher, from the optional ``watchfiles`` package.

Events only make a reload *sooner*: every event wakes the poll, which then looks at the
files itself, so a burst of events costs one check and a missed event costs one interval.
The watched path is the manifest's directory, not the file: a ConfigMap update replaces
the ``..data`` symlink there and never writes to the manifest's own directory entry.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# Events closer together than this are one wake-up (watchfiles' debounce, milliseconds).
DEBOUNCE_MILLISECONDS = 200

EventSource = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


def directory_events(path: Path, wanted: bool | None) -> EventSource | None:
    """A coroutine function setting the given event on changes in ``path``'s directory.

    None when ``wanted`` is False, or None and ``watchfiles`` is not installed; asking
    for events (True) without the package is a clear error.
    """
    if wanted is False:
        return None
    if importlib.util.find_spec("watchfiles") is None:
        if wanted:
            raise RuntimeError("events=True needs the watchfiles package: "
                               "install capc with the watch extra (capc[watch])")
        return None
    directory = path.absolute().parent

    async def watch(wake: asyncio.Event) -> None:
        from watchfiles import awatch

        stop = asyncio.Event()
        try:
            async for _changes in awatch(directory, watch_filter=None, recursive=False,
                                         debounce=DEBOUNCE_MILLISECONDS, stop_event=stop):
                wake.set()
        except asyncio.CancelledError:
            stop.set()
            raise
        except Exception as error:  # the directory went away, too many watches: poll on
            logger.warning("manifest directory %s: events stopped (%s); polling continues",
                           directory, type(error).__name__)

    return watch
