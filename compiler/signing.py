"""Signing manifests on the compile side: ``capc keygen`` and ``capc compile --sign-key``.

The signed bytes, the ``.sig`` format and verification live in the runtime
(:mod:`compiler.runtime.manifest.signature`); this module makes keys and signatures.
``cryptography`` is imported only when a key is made or used. No message, repr or log
line ever carries private key material.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compiler.errors import SigningKeyError
from compiler.runtime.manifest.files import FileTooLarge, read_regular_file
from compiler.runtime.manifest.signature import (
    INSTALL_HINT,
    ManifestSignature,
    PublicKey,
    SignatureRefused,
    check_signature,
    read_signature,
    signed_message,
)

SIGNING_KEY_ENV = "CAPC_SIGNING_KEY"
KEY_FILE_MODE = 0o600
MAX_KEY_FILE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class SigningKey:
    """An Ed25519 private key and where it came from (a path or ``$CAPC_SIGNING_KEY``)."""

    source: str
    public_key: PublicKey
    private_key: Any = field(repr=False)

    def sign(self, digest: str, signed_at: datetime | None = None) -> ManifestSignature:
        """The signature of the manifest whose digest is ``digest``, made ``signed_at``.

        The signing time (default: now) is signed with the digest and orders releases for
        a watcher refusing rollbacks; the manifest bytes themselves stay deterministic.
        """
        moment = datetime.now(UTC) if signed_at is None else signed_at.astimezone(UTC)
        return ManifestSignature(self.public_key, digest,
                                 self.private_key.sign(signed_message(digest, moment)),
                                 signed_at=moment)


def create_key_file(path: Path) -> PublicKey:
    """Write a new Ed25519 private key (PKCS8 PEM, mode 0600) to ``path``; never overwrites.

    The file is created with O_EXCL and mode 0600 from the start, so the key is never
    readable by others, not even for a moment; an existing file (or symlink) is refused.
    """
    ed25519, serialization = _crypto()
    private_key = ed25519.Ed25519PrivateKey.generate()
    pem = private_key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(path, flags, KEY_FILE_MODE)
    except FileExistsError:
        raise SigningKeyError(f"{path} already exists: capc keygen never overwrites a key; "
                              "choose another path or remove the file first") from None
    except OSError as error:
        raise SigningKeyError(f"{path}: cannot create the key file: "
                              f"{error.strerror or error}") from None
    try:
        os.fchmod(handle, KEY_FILE_MODE)  # exactly 0600, whatever the umask
        with os.fdopen(handle, "wb") as stream:
            stream.write(pem)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise
    return _public_key(private_key)


def load_signing_key(key_file: str | None, environ: Mapping[str, str]) -> SigningKey | None:
    """The key of ``--sign-key KEYFILE``, else of ``$CAPC_SIGNING_KEY`` (PEM text), else None.

    An empty ``$CAPC_SIGNING_KEY`` counts as unset. SigningKeyError (exit 2) for a key that
    cannot be read, with a message that never quotes the key.
    """
    if key_file is not None:
        try:
            pem = read_regular_file(key_file, MAX_KEY_FILE_BYTES)
        except FileTooLarge:
            pem = b""  # not a key: refused below like any other
        except OSError as error:
            raise SigningKeyError(f"{key_file}: cannot read the signing key: "
                                  f"{error.strerror or error}") from None
        return _parse_private_key(pem, key_file)
    text = environ.get(SIGNING_KEY_ENV, "")
    if not text.strip():
        return None
    return _parse_private_key(text.encode("utf-8", "replace"), f"${SIGNING_KEY_ENV}")


def signature_problem(signature_path: Path, digest: str, key: SigningKey) -> str | None:
    """Why ``signature_path`` is not ``key``'s signature of ``digest`` (None: it is)."""
    try:
        shown = str(signature_path)
        check_signature(shown, digest, read_signature(signature_path, shown), (key.public_key,))
    except SignatureRefused as refused:
        return refused.detail
    return None


def _parse_private_key(pem: bytes, source: str) -> SigningKey:
    ed25519, serialization = _crypto()
    not_a_key = SigningKeyError(
        f"{source} is not an unencrypted PEM Ed25519 private key (capc keygen -o FILE "
        "writes one)")
    if len(pem) > MAX_KEY_FILE_BYTES or b"PRIVATE KEY-----" not in pem:
        raise not_a_key
    try:
        private_key = serialization.load_pem_private_key(pem, password=None)
    except Exception:  # ValueError, TypeError (encrypted), UnsupportedAlgorithm
        # Never chained or quoted: the parser's message may echo the input.
        raise not_a_key from None
    if not isinstance(private_key, ed25519.Ed25519PrivateKey):
        raise not_a_key
    return SigningKey(source, _public_key(private_key), private_key)


def _public_key(private_key: Any) -> PublicKey:
    _, serialization = _crypto()
    raw = private_key.public_key().public_bytes(serialization.Encoding.Raw,
                                                serialization.PublicFormat.Raw)
    return PublicKey(raw)


def _crypto() -> tuple[Any, Any]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - cryptography is a dev dependency
        raise SigningKeyError(INSTALL_HINT) from None
    return ed25519, serialization


__all__ = ["SIGNING_KEY_ENV", "SigningKey", "create_key_file", "load_signing_key",
           "signature_problem"]
