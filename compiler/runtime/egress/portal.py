"""Sync calls of async tools: one background event loop per manifest, and clients per loop.

An api tool's request path is a coroutine (``_ApiCall``). ``tool.invoke`` runs that same
coroutine on the manifest's *portal*: a daemon thread running its own event loop, started
on the first sync call. The calling thread blocks until the coroutine is done, so a sync
call works from a plain thread, from LangGraph's tool worker threads and from a thread
whose own loop is running (a notebook cell), where ``asyncio.run`` would refuse.

Pooled connections belong to the loop that opened them (their sockets are registered
with that loop's selector), so the portal has a client of its own, made on the portal's
loop: :class:`LoopRoutedClient` sends each request through the client of the loop it runs
on. Closing the manifest closes both clients and stops the thread.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from compiler.runtime.egress.errors import EgressError
from compiler.runtime.egress.pool import HttpClient, HttpResponse

T = TypeVar("T")
PORTAL_THREAD_NAME = "capc-sync-portal"
STOP_TIMEOUT = 10.0


class PortalClosed(EgressError):
    """A call after the manifest was closed (the message is safe to show a model)."""


class SyncPortal:
    """A background event loop that runs coroutines for synchronous callers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The portal's loop, or None before the first sync call."""
        return self._loop

    @property
    def running(self) -> bool:
        """Whether the portal thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the portal loop and return (or raise) its result."""
        try:
            loop = self._started()
        except BaseException:
            coroutine.close()
            raise
        if threading.current_thread() is self._thread:
            coroutine.close()
            # Blocking the portal on itself would wait forever.
            raise RuntimeError("a sync tool call cannot be made from the portal's own loop")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return future.result()
        except BaseException:
            # An interrupted caller (KeyboardInterrupt, a thread being torn down) must not
            # leave its request running on the portal.
            future.cancel()
            raise

    def close(self, before_stop: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Run ``before_stop`` on the loop (closing its clients), then stop and join it."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            # Dropped from a coroutine on the portal itself: stop, it cannot join itself.
            loop.call_soon(loop.stop)
            return
        try:
            if before_stop is not None and thread.is_alive():
                asyncio.run_coroutine_threadsafe(before_stop(), loop).result(STOP_TIMEOUT)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(STOP_TIMEOUT)
            if not thread.is_alive():
                loop.close()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise PortalClosed("this manifest was closed; load it again")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(
                    target=_serve, args=(loop, ready), name=PORTAL_THREAD_NAME, daemon=True
                )
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


class LoopRoutedClient:
    """An HttpClient that sends each request through the client of the running loop.

    Async callers share the manifest's main client; calls running on the portal loop use
    the portal's own client, so no connection is ever used by two loops.
    """

    def __init__(self, factory: Callable[[], HttpClient]) -> None:
        self._factory = factory
        self._main: HttpClient | None = None
        self._main_loop: asyncio.AbstractEventLoop | None = None
        self._portal_client: HttpClient | None = None
        self._closed = False
        self.portal = SyncPortal()
        # A manifest dropped without aclose must not leave its thread running forever.
        self._finalizer = weakref.finalize(self, self.portal.close)

    def client_for_running_loop(self) -> HttpClient:
        """The client of the loop this coroutine runs on (made on first use)."""
        if self._closed:
            raise PortalClosed("this manifest was closed; load it again")
        loop = asyncio.get_running_loop()
        if loop is self.portal.loop:
            if self._portal_client is None:
                self._portal_client = self._factory()
            return self._portal_client
        if self._main is None:
            self._main, self._main_loop = self._factory(), loop
        return self._main

    async def request(self, method: str, url: str, **options: Any) -> HttpResponse:
        """Send one request (see ``HttpClient.request``) on the running loop's client."""
        return await self.client_for_running_loop().request(method, url, **options)

    def clients(self) -> Mapping[str, HttpClient]:
        """The clients made so far, by role ("main", "portal"): for leak checks."""
        made = {"main": self._main, "portal": self._portal_client}
        return {role: client for role, client in made.items() if client is not None}

    async def release_pools(self, idle: Callable[[], bool]) -> None:
        """Close the pools while ``idle()`` holds; a later request opens new ones.

        Each client is detached and closed on its own loop in one step after ``idle()`` is
        asked there, so no request that began on that loop is cut off. The portal thread
        keeps running (a tool may still be called synchronously); :meth:`aclose` stops it.
        """
        main = self._main
        if main is not None and self._main_loop is asyncio.get_running_loop() and idle():
            self._main = self._main_loop = None
            await main.aclose()
        loop = self.portal.loop
        if self._portal_client is None or loop is None:
            return

        async def release_portal_client() -> None:
            client = self._portal_client
            if client is not None and idle():
                self._portal_client = None
                await client.aclose()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(release_portal_client(), loop))

    def close(self) -> None:
        """Close from synchronous code: the portal and its client (the main client, when
        one was made, belongs to a loop: close that with :meth:`aclose`)."""
        if self._main is not None:
            raise RuntimeError("async calls were made: close the manifest with `await aclose()`")
        self._closed = True
        portal_client, self._portal_client = self._portal_client, None

        async def close_portal_client() -> None:
            if portal_client is not None:
                await portal_client.aclose()

        self.portal.close(close_portal_client)

    async def aclose(self) -> None:
        """Close the portal (its client on its own loop, then the thread) and the main client."""
        self._closed = True
        portal_client, self._portal_client = self._portal_client, None

        async def close_portal_client() -> None:
            if portal_client is not None:
                await portal_client.aclose()

        if self.portal.loop is None:
            self.portal.close()
        else:
            # Joining the portal thread blocks; the caller's loop keeps running meanwhile.
            await asyncio.to_thread(self.portal.close, close_portal_client)
        main, self._main = self._main, None
        if main is not None:
            await main.aclose()
