"""The egress pool makes its verifying TLS context on its first https connection, once.

Loading the CA bundle is most of the cost of the first resolve's HTTP client, so it waits
until a tool speaks https. Held here: plain http never builds it, https always gets the
verifying default (a self-signed loopback server is refused), and it is made only once.
"""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.egress.errors import EgressConnectionError

pytest.importorskip("cryptography")
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:
        pass


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    paths = folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def _serve(tls: ssl.SSLContext | None) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[int, int]]:
    certificate, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(certificate, key)
    plain, secure = _serve(None), _serve(tls)
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
    trusting = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    async with build_egress_client(EgressPolicy(allow_private_networks=True),
                                   ssl_context=trusting) as client:
        assert client.pool().tls_context is trusting
        response = await client.request("GET", f"https://localhost:{secure}/")
        assert response.status_code == 200 and response.content == b"hello"
