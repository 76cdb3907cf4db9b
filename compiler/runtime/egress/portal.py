"""Sync calls of async tools: one background event loop per manifest, and clients per loop.

An api tool's request path is a coroutine (``compiler.runtime.api.tool_call.ApiCall``).
``tool.invoke`` runs that same coroutine on the manifest's *portal*: a daemon thread
running its own event loop, started on the first sync call. The calling thread blocks
until the coroutine is done, so a sync call works from a plain thread, from LangGraph's
tool worker threads and from a thread whose own loop is running (a notebook cell), where
``asyncio.run`` would refuse.

Pooled connections belong to the loop that opened them (their sockets are registered
with that loop's selector), so the portal has a client of its own, made on the portal's
loop: :class:`LoopRoutedClient` sends each request through the client of the loop it runs
on. Closing the manifest cancels the sync calls still in flight (each caller returns with
a message saying so), closes both clients and stops the thread: no caller ever waits on a
loop that no longer runs.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import CancelledError, Future
from typing import Any, TypeVar

from compiler.runtime.egress.call import CallLimits, HttpClient, HttpResponse, OutgoingRequest
from compiler.runtime.egress.egress_errors import EgressError

T = TypeVar("T")
PORTAL_THREAD_NAME = "capc-sync-portal"
STOP_TIMEOUT = 10.0


class PortalClosed(EgressError):
    """A call after the manifest was closed (the message is safe to show a model)."""


class CallCancelled(PortalClosed):
    """A sync call cut short because its manifest was closed while it ran."""


class SyncPortal:
    """A background event loop that runs coroutines for synchronous callers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        # Every sync call in flight, so closing can end each one's wait.
        self._calls: set[Future[Any]] = set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The portal's loop, or None before the first sync call."""
        return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the portal loop and return (or raise) its result.

        Raises PortalClosed when the manifest is closed, CallCancelled when it is closed
        while this call runs.
        """
        try:
            with self._lock:
                # Under the lock: a close either sees this call or comes before it.
                loop = self._started()
                if threading.current_thread() is self._thread:
                    # Blocking the portal on itself would wait forever.
                    raise RuntimeError("a sync tool call cannot be made from the portal's own loop")
                future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, loop)
                self._calls.add(future)
        except BaseException:
            coroutine.close()
            raise
        try:
            return future.result()
        except CancelledError:
            if self._closed:
                raise CallCancelled(
                    "this manifest was closed while the call was in flight, so it was "
                    "cancelled; its request may have reached the API"
                ) from None
            raise
        except BaseException:
            # An interrupted caller (KeyboardInterrupt, a thread being torn down) must not
            # leave its request running on the portal.
            future.cancel()
            raise
        finally:
            with self._lock:
                self._calls.discard(future)

    def close(self, before_stop: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Cancel the calls in flight, run ``before_stop`` on the loop (closing its clients),
        then stop and join it. Every sync caller has returned or is returning afterwards."""
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
            calls = list(self._calls)
        if loop is None or thread is None:
            return
        if threading.current_thread() is thread:
            # Dropped from a coroutine on the portal itself: stop, it cannot join itself.
            _cancel_all(calls)
            loop.call_soon(loop.stop)
            return
        try:
            if thread.is_alive():
                finishing = asyncio.run_coroutine_threadsafe(_wind_down(before_stop), loop)
                finishing.result(STOP_TIMEOUT)
        finally:
            # Whatever the loop did, no caller may wait on a loop that is about to stop.
            _cancel_all(calls)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(STOP_TIMEOUT)
            if not thread.is_alive():
                loop.close()

    def _started(self) -> asyncio.AbstractEventLoop:
        # Called with the lock held.
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


async def _wind_down(before_stop: Callable[[], Coroutine[Any, Any, None]] | None) -> None:
    """On the portal loop: cancel every call and let it unwind, then run ``before_stop``."""
    this = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not this]
    for task in tasks:
        task.cancel()
    # Unwinding releases slots and connections; the clients close after, with none in use.
    await asyncio.gather(*tasks, return_exceptions=True)
    if before_stop is not None:
        await before_stop()


def _cancel_all(calls: list[Future[Any]]) -> None:
    for call in calls:
        call.cancel()


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

    async def send(
        self,
        request: OutgoingRequest,
        limits: CallLimits,
        *,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        """Send one request (see ``HttpClient.send``) on the running loop's client."""
        return await self.client_for_running_loop().send(
            request, limits, on_redirect=on_redirect, on_sent=on_sent
        )

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
