"""The egress pool makes its verifying TLS context on its first https connection, once.

Loading the CA bundle is most of the cost of the first resolve's HTTP client, so it waits
until a tool speaks https. Held here: plain http never builds it, https always gets the
verifying default (a self-signed loopback server is refused), and it is made only once.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.egress.egress_errors import EgressConnectionError
from tests.support.tls import certificate_files, client_context, server_context

pytestmark = pytest.mark.fastpath



class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(tls: ssl.SSLContext | None) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[int, int]]:
    plain, secure = _serve(None), _serve(server_context(certificate_files("localhost", tmp_path)))
    yield plain.server_address[1], secure.server_address[1]
    for server in (plain, secure):
        server.shutdown()
        server.server_close()


async def test_the_tls_context_waits_for_https_and_verifies(servers: tuple[int, int]) -> None:
    plain, secure = servers
    async with build_egress_client(EgressPolicy(allow_private_networks=True)) as client:
        assert client.pool().tls_context is None
        response = await client.request("GET", f"http://127.0.0.1:{plain}/")
        assert response.status_code == 200 and response.content == b"hello"
        assert client.pool().tls_context is None
        with pytest.raises(EgressConnectionError):
            await client.request("GET", f"https://localhost:{secure}/")
        context = client.pool().tls_context
        assert isinstance(context, ssl.SSLContext)
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        with pytest.raises(EgressConnectionError):
            await client.request("GET", f"https://127.0.0.1:{secure}/")
        assert client.pool().tls_context is context


async def test_a_given_tls_context_is_used_from_the_start(
    servers: tuple[int, int], tmp_path: Path
) -> None:
    _, secure = servers
    trusting = client_context((tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"))
    async with build_egress_client(EgressPolicy(allow_private_networks=True),
                                   ssl_context=trusting) as client:
        assert client.pool().tls_context is trusting
        response = await client.request("GET", f"https://localhost:{secure}/")
        assert response.status_code == 200 and response.content == b"hello"
