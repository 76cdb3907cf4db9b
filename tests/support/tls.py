"""The one throwaway test certificate authority: its files, and server and client TLS
contexts for a host name."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _certificate(subject: str, signer: ec.EllipticCurvePrivateKey,
                 public: ec.EllipticCurvePublicKey, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "capc test CA")]))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def certificate_files(host: str, folder: Path) -> tuple[Path, Path, Path]:
    """``(ca.pem, leaf.pem, leaf.key)`` in ``folder``: a fresh CA and a certificate for
    ``host`` that it signed."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("capc test CA", ca_key, ca_key.public_key(), True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = _certificate(host, ca_key, leaf_key.public_key(), False)
    ca_path, leaf_path, key_path = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    leaf_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(leaf_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return ca_path, leaf_path, key_path


def server_context(files: tuple[Path, Path, Path]) -> ssl.SSLContext:
    """A server context presenting the leaf of ``certificate_files``."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(files[1], files[2])
    return server


def client_context(files: tuple[Path, Path, Path]) -> ssl.SSLContext:
    """A client context that trusts the CA of ``certificate_files`` (and nothing else)."""
    return ssl.create_default_context(cafile=str(files[0]))


def tls_contexts(host: str, folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """``(server, client)`` contexts: the server presents a certificate for ``host`` that
    the client trusts (and nothing else)."""
    files = certificate_files(host, folder)
    return server_context(files), client_context(files)
