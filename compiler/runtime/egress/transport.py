"""The connection layer of egress: resolve once, check every address, connect to a checked one.

httpcore's pool calls :meth:`PinnedNetworkBackend.connect_tcp` with the URL's host name
each time it opens a connection. The backend resolves that name exactly once, refuses the
connection when the policy refuses the name or *any* of its addresses, and opens the TCP
connection to a checked address itself. httpcore then starts TLS on the returned stream
with the host *name* as server name, so SNI and certificate verification still use the
name, and the Host header still comes from the URL. A refused destination receives
nothing, not even a SYN; a name that rebinds between two lookups cannot slip in, because
there is only one lookup and the connection goes to its checked answer.

:class:`PinnedTransport` is the httpx transport around that pool. Errors from below are
left as they are (httpcore exceptions, :class:`AddressRefused`, :class:`NameNotResolved`);
``compiler.runtime.egress.client`` turns them into messages safe to show a model.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from compiler.runtime.egress.addresses import EgressPolicy, IPAddress, Refusal

Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]


class AddressRefused(Exception):
    """The policy refused a host or one of its resolved addresses; nothing was sent."""

    def __init__(self, host: str, refusal: Refusal) -> None:
        self.host = host
        self.refusal = refusal
        super().__init__(f"{host}: {refusal.reason}")


class NameNotResolved(Exception):
    """The host name has no address (or the lookup failed)."""

    def __init__(self, host: str) -> None:
        self.host = host
        super().__init__(f"{host} could not be resolved")


# Lookups of one client at once; more wait their turn (within the connect timeout).
DNS_THREADS = 4


class SystemResolver:
    """The OS resolver (getaddrinfo) on threads of its own, never the loop's default executor.

    ``loop.getaddrinfo`` blocks a thread of the loop's default executor, and that executor is
    where sync callers wait (LangGraph runs sync tools there; each waits on the portal). A
    call holding a ``max_concurrency`` slot that needed one of those threads would wait for
    callers that wait for its slot: a deadlock. Slot holders resolve here instead.
    """

    def __init__(self, threads: int = DNS_THREADS) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="capc-dns")

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        """The unique addresses of ``host``, in the resolver's order."""
        lookup = functools.partial(
            socket.getaddrinfo, host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
        try:
            infos = await asyncio.get_running_loop().run_in_executor(self._executor, lookup)
        except (socket.gaierror, UnicodeError) as error:
            raise NameNotResolved(host) from error
        except RuntimeError:
            # Closed under a call still in flight: a failed connection, not an internal error.
            raise httpcore.ConnectError("the client was closed") from None
        addresses: list[IPAddress] = []
        for _family, _type, _proto, _canonical, sockaddr in infos:
            address = ipaddress.ip_address(str(sockaddr[0]))
            if address not in addresses:
                addresses.append(address)
        return addresses

    def close(self) -> None:
        """Stop taking lookups; a lookup still blocked in the OS ends on its own."""
        self._executor.shutdown(wait=False, cancel_futures=True)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """A network backend that connects only to policy-checked addresses of one lookup.

    ``resolver`` and ``connector`` are injectable: tests make a name "resolve" to any
    address, and can observe which address the connection really went to.
    """

    def __init__(
        self,
        policy: EgressPolicy,
        resolver: Resolver | None = None,
        connector: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        # A resolver made here is owned (closed with the pool); an injected one is not.
        self._own_resolver: SystemResolver | None = None
        if resolver is None:
            self._own_resolver = resolver = SystemResolver()
        self._resolver: Resolver = resolver
        self._connector = connector or httpcore.AnyIOBackend()

    def close(self) -> None:
        """Release the resolver's threads (when this backend made the resolver)."""
        if self._own_resolver is not None:
            self._own_resolver.close()

    async def checked_addresses(self, host: str, port: int) -> list[IPAddress]:
        """Resolve ``host`` once and return its addresses, or raise if any one is refused."""
        refusal = self._policy.refusal_for_host(host)
        if refusal is not None:
            raise AddressRefused(host, refusal)
        addresses = list(await self._resolver(host, port))
        if not addresses:
            raise NameNotResolved(host)
        # Fail closed: a name with one private answer among public ones is an attack (or a
        # misconfiguration), and a later retry could pick the private one.
        for address in addresses:
            refusal = self._policy.refusal_for_resolved(host, address)
            if refusal is not None:
                raise AddressRefused(host, refusal)
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve, check, then connect to the first checked address that accepts."""
        # The connect timeout covers the lookup too: a stalled resolver is a stalled connect.
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            async with asyncio.timeout(timeout):
                addresses = await self.checked_addresses(host, port)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from None
        last_error: Exception | None = None
        for address in addresses:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            try:
                return await self._connector.connect_tcp(
                    str(address),
                    port,
                    timeout=remaining,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                last_error = error
        assert last_error is not None  # addresses is never empty here
        raise last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Unix sockets are local endpoints: never a destination of egress."""
        raise httpcore.UnsupportedProtocol("unix sockets are not an egress destination")

    async def sleep(self, seconds: float) -> None:
        """Delegate to the connector's event loop."""
        await self._connector.sleep(seconds)


@dataclass(frozen=True, slots=True)
class PoolSnapshot:
    """How many connections the pool holds, in which state (for leak checks), and the TLS
    context its https connections use (None until the first one: it is made lazily)."""

    total: int
    active: int
    idle: int
    tls_context: ssl.SSLContext | None = None


class _PoolResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            await self._stream.aclose()


class _LazyTlsConnectionPool(httpcore.AsyncConnectionPool):
    """A pool that makes its default TLS context for its first https connection.

    Loading the CA bundle costs about 14 ms, which an agent's boot (the first resolve)
    would otherwise pay even when no tool ever speaks https. The context is the one httpx
    makes without the environment (``trust_env=False``: no SSL_CERT_FILE redirection),
    made once and shared by every https connection of the pool, as before.
    """

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        """Make the TLS context first if this is the pool's first https origin."""
        # httpcore hands ``self._ssl_context`` to each connection it creates, and falls
        # back to its own default context for None: never let an https connection see None.
        if self._ssl_context is None and origin.scheme != b"http":
            self._ssl_context = httpx.create_ssl_context(trust_env=False)
        return super().create_connection(origin)


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool whose every connection is pinned and checked."""

    def __init__(
        self,
        backend: PinnedNetworkBackend,
        limits: httpx.Limits,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        # No proxies (a proxy would make the destination check meaningless) and no
        # connect retries inside the pool: retry policy lives in one place, egress.py.
        self._backend = backend
        self._pool = _LazyTlsConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            retries=0,
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send one request through the pinned pool (no redirects, no retries here)."""
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        core_response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=core_response.status,
            headers=core_response.headers,
            stream=_PoolResponseStream(core_response.stream),
            extensions=core_response.extensions,
        )

    def snapshot(self) -> PoolSnapshot:
        """The pool's connections right now: all, those serving a request, the idle ones."""
        connections = self._pool.connections
        idle = sum(1 for connection in connections if connection.is_idle())
        active = sum(
            1 for connection in connections if not connection.is_idle()
            and not connection.is_closed()
        )
        return PoolSnapshot(total=len(connections), active=active, idle=idle,
                            tls_context=self._pool._ssl_context)

    async def aclose(self) -> None:
        """Close every pooled connection, then the resolver's threads."""
        try:
            await self._pool.aclose()
        finally:
            self._backend.close()
