"""JSON-RPC 2.0 as MCP's streamable HTTP and stdio carry it: read one message, write replies.

Every limit a peer could push on is checked here, before anything is dispatched: one
message per body (MCP 2025-06-18 removed batches), ids of bounded size, a method name of
bounded length, ``params`` an object. Replies are compact JSON with keys in a fixed
order, so two replicas answering one request send the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
"""The MCP revisions served, newest first (2026-07-28 needs mcp>=2: docs/serve.md)."""
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_ID_CHARACTERS = 128
MAX_INTEGER_ID = 2**53  # what every JSON implementation reads exactly
MAX_METHOD_CHARACTERS = 128

MessageKind = Literal["request", "notification", "response"]


@dataclass(frozen=True, slots=True)
class Incoming:
    """One well-formed JSON-RPC message from a client."""

    kind: MessageKind
    id: str | int | None = None
    method: str = ""
    params: dict[str, Any] | None = None
    result: Any = None
    error: Any = None


class ProtocolError(Exception):
    """A message that cannot be dispatched: the JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str, request_id: str | int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> dict[str, Any]:
        """The error response for this problem."""
        return error_reply(self.request_id, self.code, self.message)


def parse_message(body: bytes | str) -> Incoming:
    """The message in ``body``; raises ProtocolError saying what is wrong with it."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise ProtocolError(PARSE_ERROR, "Parse error: the body is not valid JSON") from None
    if isinstance(value, list):
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: batches are not supported "
                                             "(MCP 2025-06-18 removed JSON-RPC batching); "
                                             "send one message per request")
    if not isinstance(value, dict):
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: a message is a JSON object")
    return message_from(value)


def message_from(value: dict[str, Any]) -> Incoming:
    """``value`` checked as a JSON-RPC 2.0 request, notification or response."""
    request_id = _checked_id(value)
    if value.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"',
                            request_id)
    if "method" not in value:
        if request_id is None or ("result" in value) == ("error" in value):
            raise ProtocolError(INVALID_REQUEST, "Invalid Request: no method, and not a "
                                                 "response (an id and one of result/error)")
        return Incoming("response", request_id, result=value.get("result"),
                        error=value.get("error"))
    method = value["method"]
    if not isinstance(method, str) or not 0 < len(method) <= MAX_METHOD_CHARACTERS:
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: the method must be a string "
                                             f"of 1 to {MAX_METHOD_CHARACTERS} characters",
                            request_id)
    params = value.get("params")
    if params is not None and not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: params must be an object",
                            request_id)
    kind: MessageKind = "request" if "id" in value else "notification"
    return Incoming(kind, request_id, method, params)


def _checked_id(value: dict[str, Any]) -> str | int | None:
    if "id" not in value:
        return None
    request_id = value["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        # A null id is a JSON-RPC 1 habit MCP forbids; an error reply cannot name it either.
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: the id must be a string or "
                                             "an integer")
    if isinstance(request_id, int) and abs(request_id) > MAX_INTEGER_ID:
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: the id is too large (at most "
                                             "2**53 in magnitude)")
    if isinstance(request_id, str) and len(request_id) > MAX_ID_CHARACTERS:
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: the id is too long (at most "
                                             f"{MAX_ID_CHARACTERS} characters)")
    return request_id


def result_reply(request_id: str | int | None, result: dict[str, Any]) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_reply(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    """An error response (``id`` null when the request's id could not be read)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def request_message(request_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request from the server to the client (an elicitation)."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def notification_message(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notification from the server (``notifications/tools/list_changed``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def encode(message: dict[str, Any]) -> bytes:
    """The compact UTF-8 JSON of ``message``: the same value always gives the same bytes."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def negotiated_version(requested: Any) -> str:
    """The revision to answer an ``initialize`` asking for ``requested`` with."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
