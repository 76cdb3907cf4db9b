"""Egress transports for tool tests (SPEC §17): answer from a recording, or record a call.

Both sit where :class:`~compiler.runtime.egress.transport.PinnedTransport` sits, under an
unchanged :class:`~compiler.runtime.egress.client.EgressClient`: the request a tool makes
is built, checked, redirected and its reply read by the same code as a live call.

- :class:`ReplayTransport` never opens a connection. It keeps every request it is handed
  (method, URL, headers, body bytes) and answers the n-th with the n-th recorded reply; a
  request past the recording fails as a connection that could not be made, so the tool
  reports it as it would report an unreachable service.
- :class:`RecordingTransport` wraps a real (pinned) transport, keeps each request and the
  reply it got, the body decoded and read within a bound, and hands the tool that same
  decoded body, so what is recorded is exactly what the tool read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import httpcore
import httpx

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.http import read_capped_body
from compiler.runtime.egress.transport import AddressRefused, PinnedTransport, PoolSnapshot

# Headers that describe the body's transfer, not its content: a recorded body is stored
# decoded, so these are dropped from what the tool reads back.
TRANSFER_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclass(frozen=True, slots=True)
class ObservedRequest:
    """One request as it left the client: what a case's ``request`` is compared with."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def __repr__(self) -> str:
        # Header values, URL and body may carry settings: names and sizes only.
        return (f"ObservedRequest(method={self.method!r}, "
                f"headers={[name for name, _ in self.headers]!r}, body_bytes={len(self.body)})")


@dataclass(frozen=True, slots=True)
class CannedResponse:
    """A reply as recorded: status, headers and the decoded body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool = False

    def __repr__(self) -> str:
        return f"CannedResponse(status={self.status}, body_bytes={len(self.body)})"


# A recorded body is handed to the client in pieces of this size, as a socket would.
CHUNK_BYTES = 64 * 1024


class _RecordedBody(httpx.AsyncByteStream):
    """A body already in memory, streamed to the client's bounded reader."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._body), CHUNK_BYTES):
            yield self._body[start:start + CHUNK_BYTES]

    async def aclose(self) -> None:
        """Nothing to release."""


def _response(reply: CannedResponse) -> httpx.Response:
    return httpx.Response(reply.status, headers=list(reply.headers),
                          stream=_RecordedBody(reply.body))


async def _observed(request: httpx.Request) -> ObservedRequest:
    body = await request.aread()
    headers = tuple((name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in request.headers.raw)
    return ObservedRequest(request.method, str(request.url), headers, body)


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers from ``replies`` in order and refuses any real connection.

    ``policy``: a host it refuses by its name or literal address (a redirect to a
    metadata address) is refused here as a live call would refuse it; nothing is resolved.
    """

    def __init__(self, replies: Sequence[CannedResponse],
                 policy: EgressPolicy | None = None) -> None:
        self._replies = tuple(replies)
        self._policy = policy
        self.observed: list[ObservedRequest] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The next recorded reply; past the recording, a failed connection."""
        if self._policy is not None:
            host = request.url.host
            refusal = self._policy.refusal_for_host(host)
            if refusal is not None:
                raise AddressRefused(host, refusal)
        self.observed.append(await _observed(request))
        index = len(self.observed) - 1
        if index >= len(self._replies):
            # Never a socket: a request the recording has no reply for fails to connect.
            raise httpcore.ConnectError("the recording has no reply for this request")
        return _response(self._replies[index])

    def snapshot(self) -> PoolSnapshot:
        """No pool: nothing is ever connected."""
        return PoolSnapshot(total=0, active=0, idle=0)

    async def aclose(self) -> None:
        """Nothing to close."""


@dataclass(frozen=True, slots=True)
class RecordedExchange:
    """One request and its reply, as a live call made them."""

    request: ObservedRequest
    response: CannedResponse


class RecordingTransport(httpx.AsyncBaseTransport):
    """A real transport whose exchanges are kept; each body read within ``max_body_bytes``.

    ``max_body_bytes`` should be one past the tool's ``max_response_bytes``: the tool then
    sees a body over its cap exactly as live, and marks its reply truncated.
    """

    def __init__(self, inner: PinnedTransport, max_body_bytes: int) -> None:
        self._inner = inner
        self._max_body_bytes = max_body_bytes
        self.exchanges: list[RecordedExchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send through the real transport, keep the exchange, return the decoded reply."""
        observed = await _observed(request)
        response = await self._inner.handle_async_request(request)
        try:
            body, truncated = await read_capped_body(response, self._max_body_bytes,
                                                     truncate=True)
        finally:
            await response.aclose()
        headers = tuple((name, value) for name, value in response.headers.multi_items()
                        if name.lower() not in TRANSFER_HEADERS)
        reply = CannedResponse(response.status_code, headers, body, truncated)
        self.exchanges.append(RecordedExchange(observed, reply))
        return _response(reply)

    def snapshot(self) -> PoolSnapshot:
        """The real transport's pool."""
        return self._inner.snapshot()

    async def aclose(self) -> None:
        """Close the real transport."""
        await self._inner.aclose()
