"""The MCP methods of one endpoint (a profile, or the whole manifest), transport-free.

HTTP and stdio both hand each well-formed message to :meth:`McpEndpoint.dispatch` with
two things of their own: how to build the caller's ``RuntimeContext`` and how to ask the
client a question (an elicitation). Nothing here is kept between requests: any replica
answers any request the same way.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from compiler.runtime.serve.calls import ArgumentCheck, CallGate, error_result, run_tool
from compiler.runtime.serve.catalog import EndpointTools
from compiler.runtime.serve.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Incoming,
    ProtocolError,
    error_reply,
    negotiated_version,
    result_reply,
)

if TYPE_CHECKING:
    from compiler.runtime.context import RuntimeContext
    from compiler.runtime.serve.source import ManifestSource

logger = logging.getLogger(__name__)

Approver = Callable[[str, dict[str, Any]], Awaitable[bool]]
ContextMaker = Callable[[Approver], Awaitable["RuntimeContext"]]
MAX_SHOWN_ARGUMENTS = 2000
APPROVAL_SCHEMA = {"type": "object", "properties": {"approve": {
    "type": "boolean", "title": "Run this tool call", "default": False}},
    "required": ["approve"]}


@dataclass(frozen=True, slots=True)
class ServeLimits:
    """What bounds a server: request bodies, calls at once and waiting, call time."""

    max_body_bytes: int = 1024 * 1024
    max_concurrent_calls: int = 64
    max_waiting_calls: int = 1024
    call_timeout: float = 120.0
    mcp_list_timeout: float = 30.0


class Exchange(Protocol):
    """The transport's side of one request: whether and how the client can be asked."""

    @property
    def can_elicit(self) -> bool:
        """Whether an elicitation can reach the client on this request."""
        ...

    @property
    def notifies_changes(self) -> bool:
        """Whether the transport tells this client when the tool list changed."""
        ...

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The client's ``ElicitResult``, or None when it could not answer."""
        ...


class McpEndpoint:
    """``initialize``, ``ping``, ``tools/list`` and ``tools/call`` for one endpoint."""

    def __init__(self, source: ManifestSource, profile: str | None, *, limits: ServeLimits,
                 gate: CallGate, server_info: dict[str, str]) -> None:
        self._source = source
        self._tools = EndpointTools(profile, limits.mcp_list_timeout)
        self._limits = limits
        self._gate = gate
        self._server_info = server_info
        self._check = ArgumentCheck()
        self.profile = profile

    async def dispatch(self, message: Incoming, make_context: ContextMaker,
                       exchange: Exchange) -> dict[str, Any] | None:
        """The response to ``message`` (None for a notification)."""
        if message.kind != "request":
            return None
        try:
            if message.method == "initialize":
                result = self._initialize(message, exchange)
            elif message.method == "ping":
                result = {}
            elif message.method == "tools/list":
                result = await self._list(message, make_context)
            elif message.method == "tools/call":
                result = await self._call(message, make_context, exchange)
            else:
                raise ProtocolError(METHOD_NOT_FOUND, "Method not found: this server offers "
                                    "initialize, ping, tools/list and tools/call")
        except ProtocolError as problem:
            return error_reply(message.id, problem.code, problem.message)
        except Exception as error:  # the server stays up and says nothing of its internals
            logger.exception("MCP %s failed: %s", message.method, type(error).__name__)
            return error_reply(message.id, INTERNAL_ERROR,
                               f"Internal error while handling {message.method}")
        return result_reply(message.id, result)

    def _initialize(self, message: Incoming, exchange: Exchange) -> dict[str, Any]:
        requested = (message.params or {}).get("protocolVersion")
        return {"protocolVersion": negotiated_version(requested),
                "capabilities": {"tools": {"listChanged": exchange.notifies_changes}},
                "serverInfo": self._server_info}

    async def _list(self, message: Incoming, make_context: ContextMaker) -> dict[str, Any]:
        if (message.params or {}).get("cursor") is not None:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: this server lists every "
                                                "tool in one page; there is no cursor")
        async with self._source.lease() as manifest:
            ctx = await make_context(_refuse)
            served = await self._tools.listing(manifest, ctx)
        return {"tools": [dict(tool.definition) for tool in served]}

    async def _call(self, message: Incoming, make_context: ContextMaker,
                    exchange: Exchange) -> dict[str, Any]:
        params = message.params or {}
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str) or not name:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: name must be a tool name")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        if self._gate.full():
            return error_result("Error: the server is busy with other calls; try again later")
        timeout = self._limits.call_timeout
        try:
            async with asyncio.timeout(timeout), self._gate, \
                    self._source.lease() as manifest:
                verdicts: list[bool] = []
                ctx = await make_context(_approver(exchange, verdicts))
                served = await self._tools.find(manifest, ctx, name)
                if served is None:
                    raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name[:128]!r} is not "
                                                        "served on this endpoint")
                problem = self._check.problem(served, arguments)
                if problem is not None:
                    return error_result(f"Error: invalid arguments for {name}: {problem}. "
                                        "Fix the arguments and call the tool again.")
                if served.needs_approval and not exchange.can_elicit:
                    return error_result(f"Error: {name} needs the user's approval, and this "
                                        "client cannot be asked (no elicitation); not called")
                result = await run_tool(served, arguments, ctx.mask_secrets)
                if False in verdicts:  # the tool said so in its text; the client must know
                    return error_result(f"Error: the call to {name} was not approved by the "
                                        "user; it did not run")
                return result
        except TimeoutError:
            return error_result(f"Error: {name[:128]} did not finish within {timeout:g} s; "
                                "try again later")


async def _refuse(name: str, arguments: dict[str, Any]) -> bool:
    """The approver of a listing: nothing runs while listing."""
    return False


def _approver(exchange: Exchange, verdicts: list[bool]) -> Approver:
    """An approver asking the client through ``exchange``; only an explicit yes runs.
    Each verdict is appended to ``verdicts``."""

    async def approve(name: str, arguments: dict[str, Any]) -> bool:
        verdict = await _ask(exchange, name, arguments)
        verdicts.append(verdict)
        return verdict
    return approve


async def _ask(exchange: Exchange, name: str, arguments: dict[str, Any]) -> bool:
    """Whether the client's user said yes to running ``name`` with ``arguments``."""
    if not exchange.can_elicit:
        return False
    shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    if len(shown) > MAX_SHOWN_ARGUMENTS:
        shown = shown[:MAX_SHOWN_ARGUMENTS] + " ..."
    answer = await exchange.elicit({
        "mode": "form",
        "message": f"Allow the tool {name} to run with these arguments? {shown}",
        "requestedSchema": APPROVAL_SCHEMA})
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return False
    content = answer.get("content")
    return isinstance(content, dict) and content.get("approve") is True
