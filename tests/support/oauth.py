"""An issuer for tests of the OAuth resource server: real keys, signed tokens, a JWKS server.

Keys are generated with ``cryptography`` per test session; tokens are signed per case with
PyJWT (or by hand, for the forgeries PyJWT refuses to produce); the JWKS is served by a
real ``http.server`` on 127.0.0.1 that records every fetch.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://issuer.example.test"
PUBLIC_URL = "https://tools.example.test"


@dataclass
class SigningKey:
    """A private key, its ``kid`` and algorithm, and its public JWK."""

    kid: str
    algorithm: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        exporter = RSAAlgorithm if self.algorithm.startswith(("RS", "PS")) else ECAlgorithm
        document: dict[str, Any] = json.loads(exporter.to_jwk(public))
        document.update(kid=self.kid, use="sig")
        return document

    def public_pem(self) -> bytes:
        return bytes(self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def rsa_key(kid: str = "rsa-1") -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537,
                                                             key_size=2048))


def ec_key(kid: str = "ec-1") -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


def claims(**overrides: Any) -> dict[str, Any]:
    """Good claims for the test resource; ``None`` values remove a claim. They are built
    when tests are collected, so they stay valid for a month: a loaded suite may reach
    them long after."""
    now = int(time.time())
    base: dict[str, Any] = {"iss": ISSUER, "aud": PUBLIC_URL, "sub": "user-1",
                            "iat": now, "exp": now + 30 * 86_400, "scope": "tools.read"}
    base.update(overrides)
    return {name: value for name, value in base.items() if value is not None}


def sign(key: SigningKey, payload: dict[str, Any], **header: Any) -> str:
    headers = {"kid": key.kid, **header}
    return jwt.encode(payload, key.private, algorithm=key.algorithm, headers=headers)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def forge(header: dict[str, Any], payload: dict[str, Any], secret: bytes | None) -> str:
    """A token PyJWT will not make: ``alg: none``, or HS256 keyed with a public key."""
    signing_input = (_b64(json.dumps(header).encode()) + "."
                     + _b64(json.dumps(payload).encode()))
    if secret is None:
        return signing_input + "."
    digest = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + _b64(digest)


@dataclass
class JwksServer:
    """A JWKS on 127.0.0.1 whose keys a test can change; counts the fetches."""

    keys: list[dict[str, Any]] = field(default_factory=list)
    fetches: int = 0
    url: str = ""
    body_override: bytes | None = None

    def document(self) -> bytes:
        if self.body_override is not None:
            return self.body_override
        return json.dumps({"keys": self.keys}).encode()


@contextmanager
def serving_jwks(*keys: SigningKey) -> Iterator[JwksServer]:
    state = JwksServer(keys=[key.jwk() for key in keys])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            state.fetches += 1
            body = state.document()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
