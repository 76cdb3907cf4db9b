"""Streamable HTTP, stateless: one POST carries one message, the reply is its response.

What a request must get past before it is dispatched: the Host and Origin checks (DNS
rebinding), the authenticator, the profile's scope, the content type, the body size and
the protocol version header. A ``tools/call`` answers with JSON unless its tool asks the
client for approval: then, if the client accepts ``text/event-stream``, the response
becomes a stream carrying the ``elicitation/create`` request and, after the client POSTs
its answer, the result. Nothing outlives the request but the pending elicitations of
running calls (bounded, each dropped when its call ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from compiler.runtime.serve.protocol import (
    INVALID_REQUEST,
    PROTOCOL_VERSIONS,
    Incoming,
    ProtocolError,
    encode,
    error_reply,
    parse_message,
    request_message,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

MAX_PENDING_ELICITATIONS = 1024
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


def error_response(status: int, code: int, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    """A JSON-RPC error (id null) with an HTTP status."""
    return Response(encode(error_reply(None, code, message)), status_code=status,
                    media_type=JSON_TYPE, headers=headers)


def json_response(message: dict[str, Any]) -> Response:
    """One JSON-RPC message as a 200 JSON response."""
    return Response(encode(message), media_type=JSON_TYPE)


def host_name(value: str) -> str:
    """The host of a Host header or an origin's authority, lower-cased, port dropped."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def rebinding_problem(request: Request, allowed_hosts: frozenset[str] | None,
                      allowed_origins: frozenset[str] | None) -> Response | None:
    """421 for a Host, 403 for an Origin the server does not answer to (DNS rebinding)."""
    if allowed_hosts is not None:
        host = request.headers.get("host", "")
        if host_name(host) not in allowed_hosts:
            return error_response(421, INVALID_REQUEST, "Misdirected Request: this server "
                                  "does not answer to that Host (DNS rebinding protection)")
    origin = request.headers.get("origin")
    if origin is not None and allowed_origins is not None:
        authority = origin.split("://", 1)[1] if "://" in origin else ""
        if host_name(authority) not in allowed_origins:
            return error_response(403, INVALID_REQUEST, "Forbidden: requests from that Origin "
                                  "are refused (DNS rebinding protection)")
    return None


def header_problem(request: Request) -> Response | None:
    """415, 406 or 400 for a content type, an Accept or a protocol version not served."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != JSON_TYPE:
        return error_response(415, INVALID_REQUEST, "Unsupported Media Type: send one "
                              "JSON-RPC message as application/json")
    accept = request.headers.get("accept")
    if accept is not None and not any(kind in accept for kind in (JSON_TYPE, "*/*", SSE_TYPE)):
        return error_response(406, INVALID_REQUEST, "Not Acceptable: the client must accept "
                              "application/json (and text/event-stream)")
    version = request.headers.get("mcp-protocol-version")
    if version is not None and version not in PROTOCOL_VERSIONS:
        return error_response(400, INVALID_REQUEST, "Bad Request: unsupported "
                              f"MCP-Protocol-Version; supported: {', '.join(PROTOCOL_VERSIONS)}")
    return None


async def read_body(request: Request, limit: int) -> bytes | Response:
    """The body, or 413 past ``limit`` bytes (read no further than that)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                return _too_large(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        return Response(status_code=400)
    return b"".join(chunks)


def _too_large(limit: int) -> Response:
    return error_response(413, INVALID_REQUEST, f"Payload Too Large: at most {limit} bytes")


def parsed(body: bytes) -> Incoming | Response:
    """The message of ``body``, or a 400 with the JSON-RPC error saying what is wrong."""
    try:
        return parse_message(body)
    except ProtocolError as problem:
        return JSONResponse(problem.reply(), status_code=400)


class PendingElicitations:
    """Elicitations sent on a call's stream and not answered yet, by their request id."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[Any]] = {}

    def answer(self, message: Incoming) -> None:
        """Hand a client's response to the call waiting for it (unknown ids are ignored)."""
        future = self._waiting.get(str(message.id))
        if future is not None and not future.done():
            future.set_result(message.result if message.error is None else None)

    @contextlib.contextmanager
    def open(self) -> Any:
        """A new request id and the future its answer arrives on (None when too many)."""
        if len(self._waiting) >= MAX_PENDING_ELICITATIONS:
            yield None, None
            return
        request_id = "capc-elicit-" + secrets.token_urlsafe(16)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            yield request_id, future
        finally:
            del self._waiting[request_id]


class StreamExchange:
    """The exchange of one POST: elicitations go out on its stream, when it may have one."""

    def __init__(self, pending: PendingElicitations, accepts_stream: bool) -> None:
        self._pending = pending
        self._accepts_stream = accepts_stream
        self.outgoing: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @property
    def can_elicit(self) -> bool:
        """Only a client that accepts a stream can be asked during a call."""
        return self._accepts_stream

    @property
    def notifies_changes(self) -> bool:
        """Never over stateless HTTP: no stream outlives its request (docs/serve.md)."""
        return False

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """Send ``elicitation/create`` on the stream; the client's result, or None."""
        with self._pending.open() as (request_id, future):
            if request_id is None:
                return None
            await self.outgoing.put(request_message(request_id, "elicitation/create", params))
            result = await future
        return result if isinstance(result, dict) else None


async def answer(exchange: StreamExchange,
                 dispatch: Callable[[], Awaitable[dict[str, Any] | None]]) -> Response:
    """JSON when the call finishes without asking the client; a stream once it asks."""
    task = asyncio.ensure_future(dispatch())
    asking = asyncio.ensure_future(exchange.outgoing.get())
    await asyncio.wait({task, asking}, return_when=asyncio.FIRST_COMPLETED)
    if task.done() and not asking.done():
        asking.cancel()
        reply = task.result()
        return json_response(reply) if reply is not None else Response(status_code=202)
    first = asking.result()
    return StreamingResponse(_events(first, exchange, task), media_type=SSE_TYPE,
                             headers={"cache-control": "no-cache"})


async def _events(first: dict[str, Any], exchange: StreamExchange,
                  task: asyncio.Future[dict[str, Any] | None]) -> AsyncIterator[bytes]:
    try:
        yield _event(first)
        while True:
            asking = asyncio.ensure_future(exchange.outgoing.get())
            waited: set[asyncio.Future[Any]] = {task, asking}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
            if asking.done():
                yield _event(asking.result())
                continue
            asking.cancel()
            reply = task.result()
            if reply is not None:
                yield _event(reply)
            return
    finally:
        # The client closed the stream mid-call (MCP's way of cancelling): the call is
        # cancelled and awaited here, so no task is left running without an owner.
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + encode(message) + b"\n\n"
