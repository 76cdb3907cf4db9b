"""Egress: the one way capc's runtime sends an HTTP request to a configured endpoint.

The api tools call it with two values (see ``egress.call``)::

    client = build_egress_client(EgressPolicy(allow_private_networks=False))
    check_same_origin(built_url, declared_url)       # egress.http, once slots are filled
    limits = CallLimits(timeout=30.0, max_response_bytes=1_048_576,
                        secret_headers=frozenset({"X-Api-Key"}))  # values from ${...}
    response = await client.send(OutgoingRequest("POST", built_url, headers, content=body),
                                 limits)
    response.status_code, response.headers, response.content, response.text()
    await client.aclose()                            # once, at shutdown

``client.request(method, url, headers=..., timeout=...)`` spells the same as keywords.

What it guarantees:

- Every connection goes to an address checked by the :class:`EgressPolicy`, resolved once
  (see ``egress_transport``); refusal happens before any byte is sent. No proxies from the
  environment, no cookie jar: requests go straight to the pinned transport, not through
  ``httpx.AsyncClient``, whose redirect and cookie machinery would run on hostile input.
- Redirects are followed here, at most ``limits.max_redirects`` (5), each checked again.
  Crossing to another origin drops ``Authorization``, ``Cookie`` and every header named in
  ``secret_headers``; 301/302 turn POST into GET and 303 turns anything but HEAD into GET,
  as browsers do; a body with secrets is never resent to another origin.
- GET, HEAD and OPTIONS are retried once when the connection fails before a response;
  POST, PUT, PATCH and DELETE never are.
- ``timeout`` bounds the whole call: DNS, connect, every redirect and the body.
- ``max_response_bytes`` bounds the *decoded* body; decompression stops at the cap, so a
  gzip bomb costs at most the cap in memory.
- Multipart uploads carry a base file name only (no path, control characters, quotes) and a
  media type from an allowlist (others go as application/octet-stream).
- Every failure is an :class:`EgressError` whose message is safe to show a model: it names
  the origin (scheme, host, port) and never a path, query, header value or body.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpcore
import httpx

from compiler.runtime.egress.addresses import EgressPolicy, Refusal
from compiler.runtime.egress.call import CallLimits, OutgoingRequest, UploadedFile
from compiler.runtime.egress.egress_errors import (
    EgressConnectionError,
    EgressError,
    EgressRefused,
    EgressTimeout,
    InvalidRequest,
    TooManyRedirects,
)
from compiler.runtime.egress.headers import configured_header_problem
from compiler.runtime.egress.http import (
    EgressResponse,
    field_value_problem,
    origin_of,
    read_capped_body,
    redirect_request,
    sanitize_files,
)
from compiler.runtime.egress.transport import (
    AddressRefused,
    NameNotResolved,
    PinnedNetworkBackend,
    PinnedTransport,
    PoolSnapshot,
    Resolver,
)
from compiler.runtime.egress.urls import url_shape_problem
from compiler.runtime.log_masking import hold_secrets
from compiler.runtime.manifest.model import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Methods safe to send twice. PUT and DELETE are idempotent by RFC 9110, but an api tool's
# PUT or DELETE may not be, so only the read-only methods are retried.
RETRIED_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Sent on every request, over the caller's: only encodings the body reader can decode within
# the cap are asked for.
DEFAULT_HEADERS = {"Accept-Encoding": "gzip, deflate"}
USER_AGENT = "capc-runtime"
# How long an idle pooled connection is kept for the next call.
KEEPALIVE_EXPIRY_SECONDS = 5.0


class EgressTransport(Protocol):
    """What the client sends through: :class:`PinnedTransport`, or a tool test's replaying
    or recording transport (``egress.replay``)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send one request (no redirects, no retries here)."""
        ...

    def snapshot(self) -> PoolSnapshot:
        """The pool's connections right now."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...


class EgressClient:
    """One pooled, policy-enforcing HTTP client; build it with :func:`build_egress_client`.

    Safe to share between concurrent calls and users: it holds no per-call state.
    """

    def __init__(self, transport: EgressTransport, policy: EgressPolicy) -> None:
        self._policy = policy
        self._transport = transport

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | str | None = None,
        files: Sequence[UploadedFile] = (),
        secret_headers: Collection[str] = (),
        secret_body: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> EgressResponse:
        """:meth:`send` with the request and its limits spelled as keywords (scripts, tests)."""
        body = content.encode("utf-8") if isinstance(content, str) else content
        outgoing = OutgoingRequest(
            method, url, tuple((headers or {}).items()), content=body, files=tuple(files)
        )
        limits = CallLimits(
            timeout=timeout, max_response_bytes=max_response_bytes,
            secret_headers=frozenset(secret_headers), secret_body=secret_body,
        )
        return await self.send(outgoing, limits)

    async def send(
        self,
        request: OutgoingRequest,
        limits: CallLimits,
        *,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> EgressResponse:
        """Send ``request``, follow redirects under the policy, read the body within ``limits``.

        ``on_redirect``: called for each hop followed, so a caller that retries can keep one
        redirect limit across its attempts. ``on_sent``: called when the request starts to
        leave (its headers are being written), so a caller can tell a request that never
        left from one left unanswered.
        """
        url = request.url
        headers = dict(request.headers)
        _refuse_spelled_host(self._policy, url)
        shape = url_shape_problem(url)
        if shape is not None:
            raise InvalidRequest(shape.reason)
        for name, value in headers.items():
            # Routing and framing headers are capc's to write: a caller's Host or
            # Transfer-Encoding would reach a virtual host or a body framing nobody reviewed.
            problem = configured_header_problem(name)
            if problem is not None:
                raise InvalidRequest(problem)
            problem = field_value_problem(value)
            if problem is not None:
                raise InvalidRequest(f"header {name!r} is not valid: {problem}")
        # httpcore logs response headers at DEBUG, and a server may echo a secret there:
        # while this call runs (its frame holds the source), records mask these values.
        _in_flight = hold_secrets(_secret_values(headers, limits.secret_headers))
        try:
            first = httpx.Request(
                request.method.upper(), url, content=request.content,
                data=dict(request.form_fields) if request.form_fields else None,
                files=sanitize_files(request.files) if request.files else None,
                headers=_outgoing_headers(headers),
                extensions=_request_extensions(limits.timeout, on_sent),
            )
        except (httpx.InvalidURL, ValueError, TypeError, UnicodeError) as error:
            kind = type(error).__name__
            raise InvalidRequest(f"the request could not be built ({kind})") from None
        origin = _safe_origin(first.url)
        try:
            async with asyncio.timeout(limits.timeout):
                return await self._follow(first, limits, on_redirect)
        except TimeoutError:
            message = f"no complete response from {origin} within {limits.timeout:g} s"
            raise EgressTimeout(message) from None
        except EgressRefused as refused:
            # A hop's refusal names where the caller asked to go, then where it was sent.
            if refused.origin in ("", origin):
                raise
            reason = _reason(refused.refusal)
            raise EgressRefused(
                f"request to {origin} refused: it redirected to {refused.origin}, and {reason}",
                refused.refusal, refused.origin,
            ) from None

    async def _follow(
        self,
        request: httpx.Request,
        limits: CallLimits,
        on_redirect: Callable[[], None] | None,
    ) -> EgressResponse:
        # The body is read once so that a 307/308 can resend it (streams are single-use).
        body = await request.aread()
        redirects = 0
        while True:
            async with self._send_with_retries(request, limits.connection_retries) as response:
                location = response.headers.get("location")
                if response.status_code not in REDIRECT_STATUSES or location is None:
                    content, truncated = await read_capped_body(
                        response, limits.max_response_bytes, truncate=limits.truncate_response
                    )
                    return EgressResponse(
                        status_code=response.status_code,
                        headers=response.headers,
                        content=content,
                        url=str(request.url),
                        redirects=redirects,
                        truncated=truncated,
                    )
            if redirects >= limits.max_redirects:
                raise TooManyRedirects(
                    f"more than {limits.max_redirects} redirects from {_safe_origin(request.url)}"
                )
            redirects += 1
            if on_redirect is not None:
                on_redirect()
            request = redirect_request(
                request, response.status_code, location, body,
                limits.secret_headers, limits.secret_body,
            )

    @contextlib.asynccontextmanager
    async def _send_with_retries(
        self, request: httpx.Request, retries: int
    ) -> AsyncIterator[httpx.Response]:
        attempts = 1 + (retries if request.method in RETRIED_METHODS else 0)
        origin = _safe_origin(request.url)
        for attempt in range(attempts):
            try:
                with _translated_errors(origin):
                    response = await self._transport.handle_async_request(request)
                break
            except EgressConnectionError:
                if attempt + 1 == attempts:
                    raise
        try:
            with _translated_errors(origin):
                yield response
        finally:
            await response.aclose()

    def pool(self) -> PoolSnapshot:
        """The connections the pool holds now (all, active, idle): for leak checks."""
        return self._transport.snapshot()

    async def aclose(self) -> None:
        """Close the pool. The client cannot be used afterwards."""
        await self._transport.aclose()

    async def __aenter__(self) -> EgressClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def build_egress_client(
    policy: EgressPolicy,
    *,
    resolver: Resolver | None = None,
    connector: httpcore.AsyncNetworkBackend | None = None,
    ssl_context: ssl.SSLContext | None = None,
    max_connections: int = 100,
    max_keepalive_connections: int = 20,
) -> EgressClient:
    """The one pooled client of a process (or toolset). ``resolver``/``connector``: for tests."""
    limits = httpx.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_keepalive_connections,
        keepalive_expiry=KEEPALIVE_EXPIRY_SECONDS,
    )
    backend = PinnedNetworkBackend(policy, resolver=resolver, connector=connector)
    transport = PinnedTransport(backend, limits, ssl_context=ssl_context)
    return EgressClient(transport, policy)


def _refuse_spelled_host(policy: EgressPolicy, url: str) -> None:
    """Refuse a URL whose host text alone is refused, before any URL library reinterprets it.

    httpx rejects some spellings (``0177.0.0.1``) as invalid and accepts others; either
    way the transport checks the resolved address again when it connects.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return  # httpx reports the invalid URL
    if not host:
        return
    refusal = policy.refusal_for_host(host)
    if refusal is not None:
        origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        raise EgressRefused(f"request to {origin} refused: {_reason(refusal)}", refusal)


def _request_extensions(
    timeout: float, on_sent: Callable[[], None] | None
) -> dict[str, Any]:
    """httpcore extensions: the timeout, and a trace that reports when the request leaves."""
    extensions: dict[str, Any] = {"timeout": httpx.Timeout(timeout).as_dict()}
    if on_sent is not None:
        report = on_sent

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            # "http11.send_request_headers.started" (or http2): the first byte is going out.
            if event.endswith("send_request_headers.started"):
                report()

        extensions["trace"] = trace
    return extensions


def _secret_values(headers: Mapping[str, str], secret_headers: Collection[str]) -> list[str]:
    """The values of the secret headers, and the credential after an auth scheme word."""
    secret = {name.lower() for name in secret_headers}
    values = []
    for name, value in headers.items():
        if name.lower() in secret:
            values.append(value)
            scheme, _, credential = value.partition(" ")
            if credential.strip() and scheme.isalpha():
                values.append(credential.strip())
    return values


def _outgoing_headers(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """The caller's headers, a default User-Agent unless given, and ours over theirs."""
    ours = {name.lower() for name in DEFAULT_HEADERS}
    outgoing = [(name, value) for name, value in headers.items() if name.lower() not in ours]
    if not any(name.lower() == "user-agent" for name, _ in outgoing):
        outgoing.append(("User-Agent", USER_AGENT))
    return [*outgoing, *DEFAULT_HEADERS.items()]


def _safe_origin(url: httpx.URL) -> str:
    try:
        return str(origin_of(str(url)))
    except EgressError:
        return "the endpoint"


@contextlib.contextmanager
def _translated_errors(origin: str) -> Any:
    """Turn transport exceptions into EgressErrors; their own messages are never reused.

    A refusal names the origin and the kind of address, never an address a name resolved
    to (``refusal_for_resolved``).
    """
    try:
        yield
    except AddressRefused as error:
        raise EgressRefused(
            f"request to {origin} refused: {_reason(error.refusal)}", error.refusal, origin
        ) from None
    except NameNotResolved:
        raise EgressConnectionError(f"the host of {origin} could not be resolved") from None
    except (httpcore.TimeoutException, httpx.TimeoutException):
        raise EgressTimeout(f"{origin} did not answer in time") from None
    except (httpcore.RemoteProtocolError, httpx.RemoteProtocolError):
        raise EgressConnectionError(
            f"{origin} closed the connection or sent an invalid or incomplete response"
        ) from None
    except (httpcore.NetworkError, httpx.NetworkError, OSError):
        raise EgressConnectionError(f"the connection to {origin} failed") from None
    except (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol):
        raise InvalidRequest(f"{origin} is not an http(s) endpoint") from None
    except (httpcore.LocalProtocolError, httpx.LocalProtocolError):
        raise InvalidRequest(f"the request to {origin} could not be encoded") from None


def _reason(refusal: Refusal) -> str:
    text = refusal.reason
    if refusal.overridable:
        text += " (private networks are not allowed)"
    return text
