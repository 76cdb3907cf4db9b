"""Bounds on what listing an MCP server's tools may read: bytes, tools, time.

A listing is remote data: a 16 MB listing cost 756 MB of memory, an endless one buffered
without limit, and ``capc lock`` aborted on a 27 MB one. The MCP SDK reads each response
whole (JSON) or event by event (SSE) before capc sees anything, so the bound sits below it:
the listing's httpx client counts every body byte it receives, refuses a compressed body
(it asked for none, and a compressed body's size says nothing of what it expands to),
and when the budget is spent, stops the read and wakes the listing, which is cancelled
and reported with a clear message instead of waiting for a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx

# A real listing is tens of kilobytes; a thousand generous tools fit in a few megabytes.
MAX_LISTING_BYTES = 4 * 1024 * 1024
MAX_LISTED_TOOLS = 1000
# How long a cancelled listing may take to unwind (the SDK's task group closes streams).
_UNWIND_SECONDS = 5.0
T = TypeVar("T")


class ListingTooLarge(Exception):
    """An MCP server's tool listing went past a bound (bytes, tools or encoding)."""


class ListingBudget:
    """The bytes one listing may still read; trips once, and says why.

    Mutable by design: it is the running count of one listing, shared by its client's
    responses, and read by the listing that waits for it to trip.
    """

    def __init__(self, max_bytes: int = MAX_LISTING_BYTES) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self.reason: str | None = None
        self.tripped = asyncio.Event()

    def trip(self, reason: str) -> ListingTooLarge:
        """Record ``reason`` (the first one wins), wake the listing; the error to raise."""
        if self.reason is None:
            self.reason = reason
        self.tripped.set()
        return ListingTooLarge(self.reason)

    def charge(self, size: int) -> None:
        """Count ``size`` more bytes; raise ListingTooLarge past the budget."""
        self.used += size
        if self.used > self.max_bytes:
            raise self.trip(f"the tool listing is larger than {self.max_bytes} bytes")


class _CountedStream(httpx.AsyncByteStream):
    """A response body that charges the budget for every chunk before passing it on."""

    def __init__(self, inner: Any, budget: ListingBudget) -> None:
        self._inner = inner
        self._budget = budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._budget.charge(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BudgetedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose response bodies are counted against a ListingBudget."""

    def __init__(self, inner: httpx.AsyncBaseTransport, budget: ListingBudget) -> None:
        self._inner = inner
        self._budget = budget

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` uncompressed; its response body is charged to the budget."""
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise self._budget.trip(f"the server sent a {encoding}-encoded listing; "
                                    "a listing is read uncompressed only")
        response.stream = _CountedStream(response.stream, self._budget)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


async def bounded_listing(listing: Awaitable[T], budget: ListingBudget, timeout: float) -> T:
    """The result of ``listing``, or ListingTooLarge as soon as ``budget`` trips, or
    TimeoutError after ``timeout`` seconds; a listing stopped early is cancelled."""
    task = asyncio.ensure_future(listing)
    tripped = asyncio.ensure_future(budget.tripped.wait())
    try:
        await asyncio.wait({task, tripped}, timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)
        if task.done() and not budget.tripped.is_set():
            error = task.exception()
            if error is None:
                return task.result()
            # The SDK runs the listing in a task group: a bound that tripped in there
            # (too many tools) arrives wrapped; it is the news, not the group.
            raise _bound_in(error) or error
    finally:
        tripped.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=_UNWIND_SECONDS)
    if budget.reason is not None:
        raise ListingTooLarge(budget.reason)
    raise TimeoutError(f"the tool listing took more than {timeout:g} s")


def _bound_in(error: BaseException) -> ListingTooLarge | None:
    """The ListingTooLarge inside ``error`` (exception groups included), if any."""
    if isinstance(error, ListingTooLarge):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _bound_in(inner)
            if found is not None:
                return found
    return None


def check_tool_count(count: int) -> None:
    """Raise ListingTooLarge when a listing has more tools than anyone could review."""
    if count > MAX_LISTED_TOOLS:
        raise ListingTooLarge(f"the server lists more than {MAX_LISTED_TOOLS} tools")
