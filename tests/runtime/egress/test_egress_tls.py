"""TLS through the pinned transport: connect to the checked IP, verify the certificate
against the host *name*, and send that name as SNI."""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.egress.errors import EgressConnectionError
from tests.support.loopback import FakeDns, LoopbackServer, start_server, stop_server

pytest.importorskip("cryptography")
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "secure.test"


def _certificate(
    subject: str, issuer: str, signer: ec.EllipticCurvePrivateKey,
    public: ec.EllipticCurvePublicKey, ca: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
        )
    return builder.sign(signer, hashes.SHA256())


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("capc test CA", "capc test CA", ca_key, ca_key.public_key(), True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = _certificate(HOST, "capc test CA", ca_key, leaf_key.public_key(), False)
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(leaf_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    return paths


@pytest.fixture
def tls_server(tls_files: tuple[Path, Path, Path]) -> Iterator[tuple[LoopbackServer, list[str]]]:
    _, leaf, key = tls_files
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf, key)
    server_names: list[str] = []
    context.sni_callback = lambda sock, name, ctx: server_names.append(str(name))
    running = start_server(b"", tls=context)
    yield running, server_names
    stop_server(running)


def _client_context(tls_files: tuple[Path, Path, Path]) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(tls_files[0]))


async def test_pinned_address_keeps_sni_and_certificate_checks_on_the_name(
    tls_server: tuple[LoopbackServer, list[str]], tls_files: tuple[Path, Path, Path]
) -> None:
    server, server_names = tls_server
    dns = FakeDns({HOST: [["127.0.0.1"]]})
    async with build_egress_client(
        EgressPolicy(allow_private_networks=True), resolver=dns,
        ssl_context=_client_context(tls_files),
    ) as client:
        response = await client.request("GET", f"https://{HOST}:{server.port}/echo")
    assert response.status_code == 200
    assert response.json()["headers"]["Host"] == f"{HOST}:{server.port}"
    assert server_names == [HOST] and dns.calls == [HOST]


@pytest.mark.parametrize("host", ["wrong.test", "127.0.0.1"])
async def test_a_certificate_for_another_name_is_refused(
    tls_server: tuple[LoopbackServer, list[str]], tls_files: tuple[Path, Path, Path], host: str
) -> None:
    server, _ = tls_server
    dns = FakeDns({"wrong.test": [["127.0.0.1"]]})
    async with build_egress_client(
        EgressPolicy(allow_private_networks=True), resolver=dns,
        ssl_context=_client_context(tls_files),
    ) as client:
        with pytest.raises(EgressConnectionError):
            await client.request("GET", f"https://{host}:{server.port}/echo")
    assert server.requests == []
