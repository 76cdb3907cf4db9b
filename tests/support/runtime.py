"""Test support for the runtime loader: sealed manifest fixtures and a recording HTTP server.

The digest is computed here from docs/manifest.md, independently of the compiler, so the
loader is checked against the documented format rather than against itself.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def seal(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with the digest docs/manifest.md defines."""
    content = {key: value for key, value in document.items() if key != "digest"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {**content, "digest": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()}


def manifest_document(
    capabilities: list[dict[str, Any]], overrides: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A sealed manifest document holding ``capabilities`` (sorted by code)."""
    return seal({
        "manifest_version": 1,
        "compiler": {"name": "capc", "version": "0.1.0"},
        "capabilities": sorted(capabilities, key=lambda entry: entry["code"]),
        "overrides": overrides or [],
        "plugins": {},
    })


def write_manifest(
    path: Path, capabilities: list[dict[str, Any]], overrides: list[dict[str, Any]] | None = None
) -> Path:
    """Write a sealed manifest as ``capc compile`` lays it out; returns ``path``."""
    document = manifest_document(capabilities, overrides)
    text = json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def _common(code: str, kind: str, when: Any = None) -> dict[str, Any]:
    return {
        "code": code, "name": code.replace("_", " ").title(), "description": None,
        "type": kind, "metadata": {}, "when": when,
        "source": {"path": f"capabilities/{code}.yaml", "line": 1},
    }


def internal_capability(code: str, codes: list[str] | None = None, when: Any = None) -> dict:
    """An ``internal`` capability entry."""
    return {**_common(code, "internal", when), "internal": {"codes": codes or [code]}}


def mcp_capability(code: str, **options: Any) -> dict[str, Any]:
    """An ``mcp`` capability entry; ``options`` override the deepwiki defaults."""
    mcp: dict[str, Any] = {
        "server_label": code, "server_url": "https://mcp.deepwiki.com/mcp",
        "require_approval": "never", "headers": {}, "allowed_tools": None, "extra": {},
        "placeholders": [],
    }
    mcp.update(options)
    return {**_common(code, "mcp"), "mcp": mcp}


def api_capability(
    code: str,
    url: str,
    *,
    properties: dict[str, dict[str, Any]],
    arguments: dict[str, dict[str, Any]],
    required: list[str] = (),  # type: ignore[assignment]
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body_template: Any = None,
    description: str = "",
    timeout: float = 30.0,
    max_response_bytes: int = 1048576,
    placeholders: list[str] | None = None,
    tool_name: str | None = None,
    when: Any = None,
) -> dict[str, Any]:
    """An ``api`` capability entry with its tool descriptor."""
    name = tool_name or code
    return {
        **_common(code, "api", when),
        "api": {
            "method": method, "url": url, "headers": headers or {},
            "body_template": body_template, "timeout": timeout,
            "max_response_bytes": max_response_bytes, "arguments": arguments,
            "placeholders": placeholders or [],
        },
        "tool": {
            "name": name, "original_name": name, "description": description or f"{code} tool",
            "input_schema": {
                "type": "object", "properties": properties, "required": list(required),
                "additionalProperties": False,
            },
            "output_schema": None, "namespace": None,
            "provenance": {}, "overrides": [],
        },
    }


@dataclass
class ReceivedRequest:
    """One request exactly as the server read it off the socket."""

    method: str
    raw_path: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.raw_path.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.raw_path.partition("?")[2]

    def header(self, name: str) -> str | None:
        for key, value in self.headers.items():
            if key.lower() == name.lower():
                return value
        return None


Responder = Callable[[ReceivedRequest], tuple[int, dict[str, str], bytes]]


@dataclass
class RecordingServer:
    """A threaded HTTP server on 127.0.0.1 that records every request it gets."""

    base_url: str
    received: list[ReceivedRequest] = field(default_factory=list)
    responder: Responder = field(
        default=lambda request: (200, {"Content-Type": "application/json"}, b'{"ok": true}')
    )

    def last(self) -> ReceivedRequest:
        assert self.received, "the server received no request"
        return self.received[-1]


class _QuietServer(ThreadingHTTPServer):
    # A real server's listen backlog (socketserver's default is 5): with 64 calls at once a
    # queue of 5 drops handshakes, and the retransmits' delays make a call's time a race.
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) leaves a broken pipe: expected, not news.
        return


@contextmanager
def served(server: ThreadingHTTPServer) -> Iterator[None]:
    """Serve ``server`` in a daemon thread for the duration of the block, then close it."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def recording_server(tls: ssl.SSLContext | None = None) -> Iterator[RecordingServer]:
    """Run a RecordingServer for the duration of the block (HTTPS given a server context)."""
    state = RecordingServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            request = ReceivedRequest(self.command, self.path, dict(self.headers.items()), body)
            state.received.append(request)
            status, headers, payload = state.responder(request)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = _QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    state.base_url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    with served(server):
        yield state


@dataclass(frozen=True)
class Document:
    """A chat document as the document service returns it."""

    id: int
    chat_id: int | None
    filename: str
    content: bytes


class DocumentStore:
    """A document service over a fixed set of documents; counts byte fetches."""

    def __init__(self, *documents: Document) -> None:
        self._documents = {document.id: document for document in documents}
        self.fetched: list[int] = []

    async def get_document_by_id(self, document_id: int) -> Document | None:
        return self._documents.get(document_id)

    async def fetch_document_bytes(self, document: Document) -> tuple[str, bytes]:
        self.fetched.append(document.id)
        return document.filename, document.content


def json_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document (keys and list indexes), root excluded."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += json_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += json_paths(value, (*prefix, index))
    return found
