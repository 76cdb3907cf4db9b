"""Hot reload for long-running agent servers: ``watch_manifest`` (SPEC §13).

    async with watch_manifest("/etc/capc/manifest.json", trusted_keys=[KEY]) as watcher:
        async with watcher.lease() as manifest:      # one agent run, one manifest
            toolset = await manifest.resolve(codes, ctx)
            ...
        watcher.status                               # digest, counts, last rejection

A new version is read once (bounded), verified completely (JSON, version, digest, and the
signature when ``trusted_keys`` are given) and built into a Manifest off the event loop,
then swapped in with one assignment. A bad version changes nothing but the status: the
last good manifest keeps serving, and the reason is logged once per bad version. With
``trusted_keys``, a version signed before the one served is refused as a rollback unless
``allow_rollback=True`` (:mod:`compiler.runtime.fleet.watch_order`); the keys are read once, at
the start.

The replaced manifest is *retired*: leases and api calls already holding it finish on
it, and its connection pools are closed whenever the last of them lets go (a tool kept
from it and called later opens a pool for that call, closed again after it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from compiler.runtime.context import RuntimeContext
from compiler.runtime.descriptors import ToolOverride
from compiler.runtime.errors import ManifestError, RuntimeLoaderError
from compiler.runtime.fleet.watch_events import directory_events
from compiler.runtime.fleet.watch_load import (
    LoadedVersion,
    Refused,
    ServedVersion,
    WatchOptions,
    load_version,
)
from compiler.runtime.fleet.watch_order import read_trusted_keys
from compiler.runtime.fleet.watch_source import (
    Fingerprint,
    fingerprint,
    is_racy,
)
from compiler.runtime.fleet.watch_status import Rejection, ReloadOutcome, WatchStatus
from compiler.runtime.loader import Manifest
from compiler.runtime.manifest.model import DEFAULT_MAX_UPLOAD_BYTES
from compiler.runtime.tools.registry import ToolRegistry
from compiler.runtime.toolset import Toolset
from compiler.runtime.usage import ManifestLease

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_SECONDS = 2.0
DEFAULT_MAX_MANIFEST_BYTES = 64 * 1024 * 1024
THREAD_NAME = "capc-manifest-watch"

OnChange = Callable[[Manifest], Awaitable[None]]


def watch_manifest(
    path: str | os.PathLike[str],
    *,
    trusted_keys: Iterable[str | os.PathLike[str]] | None = None,
    expected_digest: str | None = None,
    signature_path: str | os.PathLike[str] | None = None,
    registry: ToolRegistry | None = None,
    allow_private_networks: bool = False,
    plugin_context: Any = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    on_change: OnChange | None = None,
    max_manifest_bytes: int = DEFAULT_MAX_MANIFEST_BYTES,
    events: bool | None = None,
    allow_rollback: bool = False,
) -> ManifestWatcher:
    """A watcher of the manifest at ``path``; start it with ``async with`` (or ``with``).

    The options are ``load_manifest``'s, applied to every version. ``interval``: seconds
    between polls (two ``stat`` calls each); ``events``: also wake on directory events
    from the optional ``watchfiles`` package (None: when installed). ``on_change``: an
    async callable given each new manifest after it was swapped in.
    ``max_manifest_bytes``: a larger file is refused without being read further.
    ``allow_rollback``: accept a version signed before the one served (refused otherwise,
    when ``trusted_keys`` are given; the keys, files included, are read once at the start).
    """
    if interval <= 0:
        raise ValueError("interval must be a positive number of seconds")
    resolved = Path(path)
    options = WatchOptions(
        path=resolved,
        trusted_keys=None if trusted_keys is None else tuple(trusted_keys),
        expected_digest=expected_digest,
        signature_path=(Path(signature_path) if signature_path is not None
                        else Path(f"{resolved}.sig") if trusted_keys is not None else None),
        allow_private_networks=allow_private_networks,
        max_upload_bytes=max_upload_bytes,
        max_manifest_bytes=max_manifest_bytes,
        allow_rollback=allow_rollback,
    )
    return ManifestWatcher(options, registry=registry, plugin_context=plugin_context,
                           interval=interval, on_change=on_change, events=events)


class ManifestWatcher:
    """Keeps the current manifest of a long-running process; see :func:`watch_manifest`."""

    def __init__(self, options: WatchOptions, *, registry: ToolRegistry | None,
                 plugin_context: Any, interval: float, on_change: OnChange | None,
                 events: bool | None) -> None:
        self._options = options
        self._registry = registry
        self._plugin_context = plugin_context
        self._interval = interval
        self._on_change = on_change
        self._events = events
        self._current: Manifest | None = None
        self._status: WatchStatus | None = None
        self._seen: Fingerprint | None = None
        self._seen_racy = False  # seen so soon after a write that equal stats prove nothing
        self._seen_sha256 = ""
        self._served = ServedVersion()
        self._rejected_version: tuple[object, ...] | None = None
        # Weak: a retired manifest lives as long as its tools do, not as long as the watcher.
        self._retired: weakref.WeakSet[Manifest] = weakref.WeakSet()
        self._closing: set[asyncio.Task[None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def manifest(self) -> Manifest:
        """The manifest served now (prefer :meth:`lease` around a whole agent run)."""
        if self._current is None:
            raise RuntimeLoaderError("the watcher is not started: use `async with` or start()")
        return self._current

    @property
    def status(self) -> WatchStatus:
        """The current status (a frozen value)."""
        if self._status is None:
            raise RuntimeLoaderError("the watcher is not started: use `async with` or start()")
        retired = list(self._retired)
        in_use = sum(1 for manifest in retired if manifest.usage.users or manifest.open_pools)
        return replace(self._status, retired_in_use=in_use)

    def lease(self) -> ManifestLease:
        """Hold the current manifest for a block (``with`` or ``async with``).

        Everything resolved and called inside the block uses that manifest, even when a
        reload swaps in another meanwhile; its pools are closed only after the block ends.
        """
        return ManifestLease(lambda: self.manifest)

    async def resolve(self, codes: Iterable[str], ctx: RuntimeContext,
                      overrides: Sequence[ToolOverride] = (), *,
                      profile: str | None = None) -> Toolset:
        """``resolve`` on the current manifest, which a reload meanwhile does not close."""
        with self.lease() as manifest:
            return await manifest.resolve(codes, ctx, overrides, profile=profile)

    async def start(self) -> ManifestWatcher:
        """Load the first version (ManifestError if it is bad: there is nothing to keep)."""
        if self._current is not None:
            return self
        if self._options.trusted_keys is not None:  # read once: a key file swapped later
            keys = read_trusted_keys(str(self._options.path), self._options.trusted_keys)
            self._options = replace(self._options, trusted_keys=keys)
        source = directory_events(self._options.path, self._events)
        self._loop = asyncio.get_running_loop()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=THREAD_NAME)
        if self._registry is None:
            self._registry = ToolRegistry.discover(context=self._plugin_context)
        seen = fingerprint(self._options.path, self._options.signature_path)
        try:
            loaded = await self._in_worker(self._load, ServedVersion())
        except Refused as refused:
            await self._shutdown()
            if isinstance(refused.__cause__, ManifestError):
                raise refused.__cause__ from None
            raise ManifestError(str(self._options.path), "read", refused.reason) from None
        except BaseException:
            await self._shutdown()
            raise
        assert loaded.manifest is not None
        self._swap(loaded, seen, first=True)
        assert self._status is not None
        self._status = replace(self._status, mode="polling" if source is None else "events")
        self._tasks.append(asyncio.create_task(self._poll(), name=THREAD_NAME))
        if source is not None:
            events = asyncio.create_task(source(self._wake), name=f"{THREAD_NAME}-events")
            self._tasks.append(events)
        return self

    async def check_now(self) -> ReloadOutcome:
        """Look for a new version now and load it: what a poll does, awaitable."""
        async with self._lock:
            if self._closed or self._current is None:
                raise RuntimeLoaderError("the watcher is closed or not started")
            seen = fingerprint(self._options.path, self._options.signature_path)
            if seen == self._seen and not self._seen_racy:
                return "unchanged"
            try:
                loaded = await self._in_worker(self._load, self._served)
            except Refused as refused:
                return self._reject(refused.seen or seen, refused.version, refused.check,
                                    refused.reason)
            except Exception as error:  # a bug must not take the server down: keep serving
                logger.exception("manifest %s: unexpected failure while loading a new version",
                                 self._options.path)
                reason = f"unexpected failure while loading ({type(error).__name__})"
                return self._reject(seen, ("error", seen, reason), "load", reason)
            if loaded.manifest is None:
                self._record(seen, loaded.snapshot.sha256)
                return "unchanged"
            new = loaded.manifest
            self._swap(loaded, seen)
        if self._on_change is not None:
            try:
                await self._on_change(new)
            except Exception:
                logger.exception("manifest %s: the on_change callback failed", self._options.path)
        return "accepted"

    async def aclose(self) -> None:
        """Stop watching and close every manifest (current and retired)."""
        if self._closed:
            return
        self._closed = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        async with self._lock:
            while self._closing:  # pool releases already under way finish first
                await asyncio.gather(*list(self._closing), return_exceptions=True)
            manifests = [*list(self._retired), *([self._current] if self._current else [])]
            self._retired = weakref.WeakSet()
        for manifest in manifests:
            await manifest.aclose()
        await self._shutdown()

    async def __aenter__(self) -> ManifestWatcher:
        return await self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, traceback: TracebackType | None) -> None:
        await self.aclose()

    def __enter__(self) -> ManifestWatcher:
        """Start in a plain script: the watcher runs its own loop in a background thread."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"{THREAD_NAME}-loop",
                                  daemon=True)
        thread.start()
        self._thread = thread
        try:
            asyncio.run_coroutine_threadsafe(self.start(), loop).result()
        except BaseException:
            self._stop_thread(loop)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None,
                 exc: BaseException | None, traceback: TracebackType | None) -> None:
        loop = self._loop
        if loop is None or self._thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result()
        finally:
            self._stop_thread(loop)

    def check_now_sync(self) -> ReloadOutcome:
        """:meth:`check_now` from a plain script (a watcher started with ``with``)."""
        if self._loop is None or self._thread is None:
            raise RuntimeLoaderError("check_now_sync needs a watcher started with `with`")
        return asyncio.run_coroutine_threadsafe(self.check_now(), self._loop).result()

    def _stop_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        thread, self._thread = self._thread, None
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()

    async def _poll(self) -> None:
        """Check every ``interval`` seconds, or sooner when a directory event arrives."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._interval)
            self._wake.clear()
            try:
                await self.check_now()
            except RuntimeLoaderError:
                return  # closed meanwhile
            except Exception:
                logger.exception("manifest %s: the watch loop failed a check; it goes on",
                                 self._options.path)

    async def _in_worker(self, load: Callable[[ServedVersion], LoadedVersion],
                         current: ServedVersion) -> LoadedVersion:
        # Reading, hashing and parsing megabytes off the loop keeps tool calls flowing.
        assert self._loop is not None and self._executor is not None
        return await self._loop.run_in_executor(self._executor, load, current)

    def _load(self, served: ServedVersion) -> LoadedVersion:
        """Read, verify and build one version (in the worker thread)."""
        assert self._registry is not None
        return load_version(self._options, self._registry, served, self._seen_sha256)

    def _swap(self, loaded: LoadedVersion, seen: Fingerprint, first: bool = False) -> None:
        new = loaded.manifest
        assert new is not None
        old, self._current = self._current, new  # the swap: one assignment
        self._served = ServedVersion(new.digest, loaded.signed_at)
        self._record(seen, loaded.snapshot.sha256)
        self._rejected_version = None
        now = datetime.now(UTC)
        if self._status is None:
            self._status = WatchStatus(str(self._options.path), new.digest, now,
                                       signed_at=loaded.signed_at)
        else:
            self._status = replace(self._status, digest=new.digest, loaded_at=now,
                                   reloads_accepted=self._status.reloads_accepted + 1,
                                   signed_at=loaded.signed_at)
        if not first:
            logger.info("manifest %s: now serving %s (was %s)", self._options.path,
                        new.digest, old.digest if old else None)
        if old is not None:
            self._retired.add(old)
            old.usage.retire(lambda: self._close_when_idle(old))

    def _record(self, seen: Fingerprint, sha256: str) -> None:
        self._seen, self._seen_sha256 = seen, sha256
        self._seen_racy = is_racy(seen, time.time_ns())

    def _reject(self, seen: Fingerprint, version: tuple[object, ...], check: str,
                reason: str) -> ReloadOutcome:
        self._record(seen, "")
        assert self._status is not None and self._current is not None
        if version == self._rejected_version:
            return "rejected"  # this bad version was counted and logged already
        self._rejected_version = version
        self._status = replace(
            self._status, reloads_rejected=self._status.reloads_rejected + 1,
            last_rejection=Rejection(datetime.now(UTC), check, reason),
        )
        logger.error("manifest %s: new version rejected, still serving %s: %s",
                     self._options.path, self._current.digest, reason)
        return "rejected"

    def _close_when_idle(self, manifest: Manifest) -> None:
        """Release a retired manifest's pools on the watcher's loop (called from any thread)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        # RuntimeError: the loop stopped, and aclose closed every manifest already.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._start_close, manifest)

    def _start_close(self, manifest: Manifest) -> None:
        if self._closed:
            return  # aclose closes every manifest itself
        task = asyncio.get_running_loop().create_task(manifest.release_pools())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _shutdown(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            # A load cancelled mid-way still runs in the thread: it is bounded, wait for it.
            executor.shutdown(wait=True)
