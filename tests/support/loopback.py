"""Real loopback HTTP servers that count what reaches them, and a routing network for tests.

``LoopbackServer`` is a threaded ``http.server`` on 127.0.0.1 (HTTP/1.1, keep-alive) whose
paths act out the behaviours egress must survive: redirects, echoes, gzip bombs, resets,
stalls and truncated bodies. Every request that arrives is recorded, so a test can assert
that *nothing* reached it.

``RoutingConnector`` is an httpcore network backend for the egress client that stands in
for a hostile network where every address is routable: it records the address egress
asked for, then really connects to one of the loopback servers (public addresses to the
"public" server, every other address to the "private" one).
"""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import struct
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpcore

from compiler.runtime.egress.addresses import (
    AddressClass,
    IPAddress,
    classify_address,
)
from compiler.runtime.egress.host_literals import parse_ip_literal
from compiler.runtime.egress.transport import NameNotResolved

BOMB_DECODED_BYTES = 200 * 1024 * 1024
STALL_GUARD = 120  # seconds a stall lasts if its server is never stopped (a hang guard)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    header_lines: tuple[tuple[str, str], ...] = ()  # every header line, repeats included


def make_gzip_bomb() -> bytes:
    """About 200 KiB of gzip that decodes to 200 MiB of zeros."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1024 * 1024)
    parts = [compressor.compress(zeros) for _ in range(BOMB_DECODED_BYTES // len(zeros))]
    return b"".join(parts) + compressor.flush()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the recorded requests instead."""

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parsed = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parsed.query).items()}
        self.server.record(
            RecordedRequest(self.command, self.path, dict(self.headers.items()), body,
                            tuple(self.headers.items()))
        )
        route = getattr(self, "route_" + parsed.path.strip("/").replace("-", "_"), None)
        if route is None:
            self._send(404, b"not found")
        else:
            route(query)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    def _send(self, status: int, body: bytes, headers: Iterable[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route_ok(self, query: dict[str, str]) -> None:
        self._send(200, b'{"ok": true}', [("Content-Type", "application/json")])

    def route_echo(self, query: dict[str, str]) -> None:
        self._echo(200)

    def route_echo_error(self, query: dict[str, str]) -> None:
        self._echo(int(query.get("status", "500")))

    def _echo(self, status: int) -> None:
        # Echo everything the request carried, as careless APIs do in their error pages.
        last = self.server.requests[-1]
        echoed = {"method": last.method, "path": last.path, "headers": last.headers,
                  "body": last.body.decode(errors="replace")}
        self._send(status, json.dumps(echoed).encode(), [("Content-Type", "application/json")])

    def route_redirect(self, query: dict[str, str]) -> None:
        self._send(int(query.get("status", "302")), b"", [("Location", query["to"])])

    def route_chain(self, query: dict[str, str]) -> None:
        left = int(query["n"])
        target = f"/chain?n={left - 1}" if left > 0 else "/ok"
        self._send(302, b"", [("Location", target)])

    def route_gzip_bomb(self, query: dict[str, str]) -> None:
        self._send(200, self.server.bomb(), [("Content-Encoding", "gzip")])

    def route_gzip(self, query: dict[str, str]) -> None:
        self._send(200, gzip.compress(b"x" * int(query["n"])), [("Content-Encoding", "gzip")])

    def route_big(self, query: dict[str, str]) -> None:
        self._send(200, b"x" * int(query["n"]))

    def route_chunked_big(self, query: dict[str, str]) -> None:
        # No Content-Length: the cap must stop the read, not a header check.
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"y" * 65536
        try:
            for _ in range(int(query["n"]) // len(chunk)):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client stopped reading at its cap, as it should

    def route_reset(self, query: dict[str, str]) -> None:
        # SO_LINGER 0 makes close() send an RST instead of a FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def route_stall(self, query: dict[str, str]) -> None:
        # Held until the server stops: the client's timeout is the only way the call ends,
        # never a race between that timeout and a number of seconds here.
        self.server.stopping.wait(STALL_GUARD)
        self._send(200, b"late")

    def route_stall_body(self, query: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b"0123456789")
        self.wfile.flush()
        self.server.stopping.wait(STALL_GUARD)

    def route_truncated(self, query: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b"0123456789")
        self.wfile.flush()
        self.close_connection = True

    def route_set_cookie(self, query: dict[str, str]) -> None:
        self._send(200, b"", [("Set-Cookie", "session=user-one-secret; Path=/")])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, bomb: Any) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[RecordedRequest] = []
        self.bomb = bomb
        self.stopping = threading.Event()  # ends every stall
        self._lock = threading.Lock()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: clients that hang up early are part of the tests."""


@dataclass
class LoopbackServer:
    """A running server on 127.0.0.1; ``requests`` holds what reached it."""

    server: _Server
    thread: threading.Thread = field(repr=False)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.server.requests

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def start_server(bomb: bytes, tls: ssl.SSLContext | None = None) -> LoopbackServer:
    """Start a loopback server in a daemon thread (HTTPS when given a server TLS context)."""
    server = _Server(lambda: bomb)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return LoopbackServer(server, thread)


def stop_server(running: LoopbackServer) -> None:
    running.server.stopping.set()
    running.server.shutdown()
    running.server.server_close()


class FakeDns:
    """An injectable resolver: names map to answers (a list per call, to model rebinding)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self._answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        sequence = self._answers.get(host.lower())
        if sequence is not None:
            index = min(sum(1 for call in self.calls if call == host) - 1, len(sequence) - 1)
            return [parse_ip_literal(text) for text in sequence[index]]  # type: ignore[misc]
        literal = parse_ip_literal(host)
        if literal is None:
            raise NameNotResolved(host)
        return [literal]


class RoutingConnector(httpcore.AsyncNetworkBackend):
    """Connects public addresses to one loopback server, every other address to another."""

    def __init__(self, public_port: int, private_port: int) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._public_port = public_port
        self._private_port = private_port
        self.dialled: list[str] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append(host)
        address = parse_ip_literal(host)
        public = address is not None and classify_address(address) is AddressClass.PUBLIC
        target = self._public_port if public else self._private_port
        return await self._inner.connect_tcp("127.0.0.1", target, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
