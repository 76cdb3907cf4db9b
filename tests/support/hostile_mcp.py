"""A minimal streamable-HTTP MCP server on 127.0.0.1 whose ``tools/list`` reply a test writes.

Real HTTP over a real socket, speaking just enough MCP (``initialize``, the initialized
notification, ``tools/list``) for the official SDK client to list tools. The listing is
produced by a callable yielding body chunks, so a test can send a huge, endless or
compressed listing the way a hostile server would; ``bytes_sent`` records how much of it
went out before the client stopped reading.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Listing = Callable[[int], Iterable[bytes]]  # request id -> body chunks


def tools_listing(tools: list[dict[str, Any]]) -> Listing:
    """A well-formed ``tools/list`` result holding ``tools``."""
    def chunks(request_id: int) -> Iterator[bytes]:
        yield json.dumps({"jsonrpc": "2.0", "id": request_id,
                          "result": {"tools": tools}}).encode()
    return chunks


def tool(name: str, description: str = "A tool.") -> dict[str, Any]:
    """One listed tool with an empty object schema."""
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {}}}


def endless_listing(request_id: int) -> Iterator[bytes]:
    """A listing whose one tool's description never ends."""
    yield (f'{{"jsonrpc": "2.0", "id": {request_id}, "result": {{"tools": [{{"name": "t", '
           '"inputSchema": {"type": "object"}, "description": "').encode()
    while True:
        yield b"x" * 65536


@dataclass
class HostileMcpServer:
    """Where the server listens, and what it sent."""

    url: str = ""
    listing: Listing = field(default=lambda request_id: tools_listing([tool("t")])(request_id))
    gzip_listing: bool = False
    bytes_sent: int = 0
    methods: list[str] = field(default_factory=list)


@contextmanager
def hostile_mcp_server() -> Iterator[HostileMcpServer]:
    """Run a HostileMcpServer for the duration of the block."""
    state = HostileMcpServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            message = json.loads(self.rfile.read(length) or b"{}")
            method = message.get("method", "")
            state.methods.append(method)
            if "id" not in message:  # a notification
                self._reply(202, b"", "application/json")
            elif method == "initialize":
                self._reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"}}}).encode(),
                    "application/json")
            elif method == "tools/list":
                self._stream(state.listing(message["id"]))
            else:
                self._reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                             "result": {}}).encode(), "application/json")

        def do_GET(self) -> None:
            self._reply(405, b"", "text/plain")

        def do_DELETE(self) -> None:
            self._reply(200, b"", "text/plain")

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, chunks: Iterable[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            if state.gzip_listing:
                self.send_header("Content-Encoding", "gzip")
                chunks = [gzip.compress(b"".join(chunks))]
            self.end_headers()
            try:
                for chunk in chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    state.bytes_sent += len(chunk)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                return  # the client stopped reading: what a bounded client does

        def log_message(self, format: str, *args: Any) -> None:
            return

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            return

    server = Server(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
