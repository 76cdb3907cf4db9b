"""Signing test manifests independently of capc, from the bytes docs/manifest.md defines.

Like ``tests.support.runtime.seal``, this does not call the code under test: the loader
and ``capc verify`` are checked against the documented format, not against themselves.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DOMAIN = b"capc-manifest-signature-v1\n"
DOMAIN_V2 = b"capc-manifest-signature-v2\n"  # the digest, a line feed, then signed_at


@dataclass(frozen=True)
class KeyPair:
    """An Ed25519 key pair with the forms capc reads."""

    private_key: Ed25519PrivateKey

    @property
    def public_text(self) -> str:
        raw = self.private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return "ed25519:" + base64.b64encode(raw).decode()

    @property
    def private_pem(self) -> bytes:
        return self.private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption())

    @property
    def public_pem(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def signature_document(self, digest: str, message: bytes | None = None,
                           signed_at: str | None = None) -> dict[str, str]:
        """The ``.sig`` document signing ``digest`` (or, to forge, other ``message`` bytes).

        With ``signed_at`` (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), the v2 form that orders
        releases; without, the v1 form of earlier capc versions.
        """
        if message is not None:
            signed = message
        elif signed_at is None:
            signed = DOMAIN + digest.encode()
        else:
            signed = DOMAIN_V2 + digest.encode() + b"\n" + signed_at.encode()
        document = {"algorithm": "ed25519", "public_key": self.public_text, "digest": digest,
                    "signature": base64.b64encode(self.private_key.sign(signed)).decode()}
        if signed_at is not None:
            document["signed_at"] = signed_at
        return document


def new_key() -> KeyPair:
    """A fresh key pair."""
    return KeyPair(Ed25519PrivateKey.generate())


def manifest_digest(path: Path) -> str:
    """The ``digest`` recorded in the manifest at ``path``."""
    return str(json.loads(path.read_text(encoding="utf-8"))["digest"])


def sign_file(path: Path, key: KeyPair, signature_path: Path | None = None) -> Path:
    """Write ``PATH.sig`` (or ``signature_path``) signing the manifest at ``path``."""
    target = signature_path or Path(str(path) + ".sig")
    document = key.signature_document(manifest_digest(path))
    target.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return target
