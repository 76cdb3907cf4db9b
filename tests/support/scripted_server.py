"""A scripted HTTP server on 127.0.0.1: each path answers from a list of replies, in order.

It records every request in the order it arrived and counts the requests in flight at
once, so tests can assert on order and concurrency. It keeps no clock: a reply is held
until an event the test sets, never for a number of seconds, so no outcome depends on
which of two timers fires first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.runtime import served

HANG_GUARD = 120  # seconds a held reply waits for its event if a test never sets it


@dataclass(frozen=True)
class Reply:
    """One scripted answer; with ``until``, it is sent only once the test sets that event."""

    status: int = 200
    body: bytes = b'{"ok": true}'
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    until: threading.Event | None = None
    reset: bool = False  # close the connection without any response
    # Answer only once the barrier's other parties arrived too: proves calls overlapped
    # without timing them (a broken barrier closes the connection, failing the call).
    together: threading.Barrier | None = None


@dataclass(frozen=True)
class Arrival:
    """A request as it reached the server."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@dataclass
class ScriptedServer:
    """The state tests read: ``arrivals``, ``max_in_flight``; ``script`` sets the replies."""

    base_url: str = ""
    arrivals: list[Arrival] = field(default_factory=list)
    max_in_flight: int = 0
    in_flight: int = 0
    scripts: dict[str, list[Reply]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, path: str, *replies: Reply) -> str:
        """Answer ``path`` with ``replies`` in turn (the last one repeats); returns its URL."""
        self.scripts[path] = list(replies)
        return self.base_url + path

    def next_reply(self, path: str) -> Reply:
        with self.lock:
            replies = self.scripts.get(path) or [Reply(404, b"no script")]
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def to(self, path: str) -> list[Arrival]:
        return [arrival for arrival in self.arrivals if arrival.path.split("?")[0] == path]


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """Run a ScriptedServer for the block."""
    state = ScriptedServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with state.lock:
                state.arrivals.append(Arrival(self.command, self.path,
                                              dict(self.headers.items()), body))
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                reply = state.next_reply(self.path.split("?")[0])
                if reply.together is not None:
                    reply.together.wait()
                if reply.until is not None:
                    reply.until.wait(HANG_GUARD)
            finally:
                # No longer in flight once answering starts: a client that got its answer
                # and sent the next request must never find this one still counted.
                with state.lock:
                    state.in_flight -= 1
            if reply.reset:
                self.close_connection = True
                return
            self.send_response_only(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if not any(name.lower() == "date" for name, _ in reply.headers):
                self.send_header("Date", self.date_time_string())
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = _Quiet(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    with served(server):
        yield state
