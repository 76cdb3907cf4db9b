"""Ed25519 signatures of manifests (SPEC §6): the signed bytes, the ``.sig`` file, checks.

A signature signs the manifest's digest, never the file: the message is
:data:`SIGNATURE_DOMAIN_V2`, the digest line ``sha256:HEX``, a line feed and the signing
time (``signed_at``, UTC, microseconds), so a signature made for a capc manifest cannot
be replayed as a signature of anything else, and a watcher can tell an older release
from a newer one without the manifest bytes carrying a time (SPEC §13). Signatures of
earlier capc versions (:data:`SIGNATURE_DOMAIN`, the digest alone, no ``signed_at``) still
verify; they carry no order. docs/manifest.md states the same bytes for verifiers in other
languages.

``cryptography`` is imported only by the functions that need it (public keys in PEM and
the Ed25519 check itself), so a loader that verifies nothing never imports it.
"""

from __future__ import annotations

import base64
import binascii
import errno
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compiler.runtime.errors import ManifestError
from compiler.runtime.manifest.files import FileTooLarge, UnreadableFile, read_regular_file

SIGNATURE_ALGORITHM = "ed25519"
PUBLIC_KEY_PREFIX = "ed25519:"
SIGNATURE_DOMAIN = b"capc-manifest-signature-v1\n"  # the digest alone: no order
SIGNATURE_DOMAIN_V2 = b"capc-manifest-signature-v2\n"  # the digest and the signing time
SIGNATURE_SUFFIX = ".sig"
SIGNATURE_KEYS = frozenset({"algorithm", "public_key", "digest", "signature"})
SIGNED_AT_KEY = "signed_at"
SIGNED_AT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # one spelling: UTC, always six fraction digits
SIGNED_AT_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                               r"\.[0-9]{6}Z")
MAX_SIGNATURE_FILE_BYTES = 64 * 1024
MAX_KEY_FILE_BYTES = 64 * 1024  # a PEM public key is a few hundred bytes
DIGEST_PATTERN = re.compile(r"sha256:[0-9a-f]{64}")
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
INSTALL_HINT = "install capc[sign] (the cryptography package) to sign or verify manifests"

# Why a signature check failed; ``capc verify`` prints these names.
SIGNATURE_MISSING = "signature-missing"
SIGNATURE_MALFORMED = "signature-malformed"
SIGNATURE_ALGORITHM_UNSUPPORTED = "algorithm"
SIGNATURE_FOR_ANOTHER_MANIFEST = "other-manifest"
SIGNATURE_KEY_NOT_TRUSTED = "untrusted-key"
SIGNATURE_INVALID = "signature-invalid"


class SignatureRefused(ManifestError):
    """A manifest refused because of its signature; ``reason`` names the failed check."""

    def __init__(self, path: str, reason: str, detail: str) -> None:
        self.reason = reason
        super().__init__(path, "signature", f"[{reason}] {detail}")


class PublicKeyError(ValueError):
    """A trusted public key that cannot be read (the message never quotes key files)."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key: its 32 raw bytes, written ``ed25519:BASE64``."""

    raw: bytes

    @property
    def text(self) -> str:
        """The one-line form ``ed25519:BASE64`` (standard base64 of the raw key)."""
        return PUBLIC_KEY_PREFIX + base64.b64encode(self.raw).decode("ascii")

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class ManifestSignature:
    """The content of a ``.sig`` file."""

    public_key: PublicKey
    digest: str
    signature: bytes
    algorithm: str = SIGNATURE_ALGORITHM
    signed_at: datetime | None = None  # None: a signature of an earlier capc (no order)

    def to_bytes(self) -> bytes:
        """The file bytes: key-sorted JSON, indented, with a final newline."""
        document = {
            "algorithm": self.algorithm,
            "public_key": self.public_key.text,
            "digest": self.digest,
            "signature": base64.b64encode(self.signature).decode("ascii"),
        }
        if self.signed_at is not None:
            document[SIGNED_AT_KEY] = format_signed_at(self.signed_at)
        return (json.dumps(document, sort_keys=True, indent=2) + "\n").encode("ascii")


def format_signed_at(moment: datetime) -> str:
    """The one spelling of a signing time: UTC, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    return moment.astimezone(UTC).strftime(SIGNED_AT_FORMAT)


def parse_signed_at(text: str) -> datetime | None:
    """The time ``text`` spells in :func:`format_signed_at`'s form exactly, else None."""
    if not SIGNED_AT_PATTERN.fullmatch(text):
        return None
    try:
        moment = datetime.strptime(text, SIGNED_AT_FORMAT).replace(tzinfo=UTC)
    except ValueError:  # 2026-13-45 matches the pattern
        return None
    return moment if format_signed_at(moment) == text else None


def signed_message(digest: str, signed_at: datetime | None = None) -> bytes:
    """The bytes an Ed25519 signature of a manifest with ``digest`` signs.

    With ``signed_at``: the v2 message, whose signing time orders releases; without: the
    v1 message of earlier capc versions (kept so that their signatures still verify).
    """
    if signed_at is None:
        return SIGNATURE_DOMAIN + digest.encode("ascii")
    return (SIGNATURE_DOMAIN_V2 + digest.encode("ascii") + b"\n"
            + format_signed_at(signed_at).encode("ascii"))


def signature_path_for(manifest_path: str | os.PathLike[str]) -> Path:
    """Where the signature of ``manifest_path`` lives by default: ``MANIFEST.sig``."""
    return Path(os.fspath(manifest_path) + SIGNATURE_SUFFIX)


def parse_public_key(value: str | os.PathLike[str] | PublicKey) -> PublicKey:
    """A trusted key from ``ed25519:BASE64``, PEM text, or the path of a PEM public key file.

    A :class:`PublicKey` is taken as is: a watcher reads its key files once, at its start.
    """
    if isinstance(value, PublicKey):
        return value
    if isinstance(value, str) and value.startswith(PUBLIC_KEY_PREFIX):
        key = _inline_public_key(value)
        if key is None:
            raise PublicKeyError(
                f"{_shorten(value)} is not an Ed25519 public key: after 'ed25519:' comes "
                f"the standard base64 of {PUBLIC_KEY_BYTES} bytes")
        return key
    if isinstance(value, str) and value.lstrip().startswith("-----BEGIN"):
        return _pem_public_key(value.encode("ascii", "replace"), "the PEM text")
    path = Path(value)
    try:
        data = read_regular_file(path, MAX_KEY_FILE_BYTES)
    except OSError as error:
        raise PublicKeyError(
            f"{path}: cannot read the public key file ({error.strerror or error}); a key is "
            "'ed25519:BASE64' or the path of a PEM public key file") from None
    return _pem_public_key(data, str(path))


def parse_trusted_keys(
        values: Iterable[str | os.PathLike[str] | PublicKey]) -> tuple[PublicKey, ...]:
    """Every key of ``values`` (see :func:`parse_public_key`); PublicKeyError names a bad one."""
    if isinstance(values, str | bytes | os.PathLike):
        raise PublicKeyError("trusted keys must be a list of keys, not a single key")
    return tuple(parse_public_key(value) for value in values)


def parse_signature(raw: bytes, shown: str) -> ManifestSignature:
    """The ``.sig`` file's content; SignatureRefused (malformed, algorithm) otherwise."""
    def malformed(detail: str) -> SignatureRefused:
        return SignatureRefused(shown, SIGNATURE_MALFORMED, f"the signature file {detail}")

    if len(raw) > MAX_SIGNATURE_FILE_BYTES:
        raise malformed(f"is larger than {MAX_SIGNATURE_FILE_BYTES} bytes")
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise malformed("is not JSON") from None
    if not isinstance(document, dict):
        raise malformed("is not a JSON object")
    if set(document) not in (SIGNATURE_KEYS, SIGNATURE_KEYS | {SIGNED_AT_KEY}):
        listed = ", ".join(sorted(SIGNATURE_KEYS))
        raise malformed(f"must have exactly the keys {listed} (and {SIGNED_AT_KEY})")
    if not all(isinstance(value, str) for value in document.values()):
        raise malformed("has a value that is not a string")
    signed_at = None
    if SIGNED_AT_KEY in document:
        signed_at = parse_signed_at(document[SIGNED_AT_KEY])
        if signed_at is None:
            raise malformed(f"{SIGNED_AT_KEY} is not a UTC time written "
                            "YYYY-MM-DDTHH:MM:SS.ffffffZ")
    if document["algorithm"] != SIGNATURE_ALGORITHM:
        raise SignatureRefused(
            shown, SIGNATURE_ALGORITHM_UNSUPPORTED,
            f"algorithm {_shorten(document['algorithm'])!r} is not supported (only "
            f"{SIGNATURE_ALGORITHM!r})")
    if not DIGEST_PATTERN.fullmatch(document["digest"]):
        raise malformed("digest is not 'sha256:' and 64 lowercase hex digits")
    signature = _strict_base64(document["signature"])
    if signature is None or len(signature) != SIGNATURE_BYTES:
        raise malformed(f"signature is not the base64 of {SIGNATURE_BYTES} bytes")
    # Only the inline form: a signature file must never make the verifier read a path.
    public_key = _inline_public_key(document["public_key"])
    if public_key is None:
        raise malformed("public_key is not 'ed25519:BASE64' of a 32-byte key")
    return ManifestSignature(public_key, document["digest"], signature,
                             signed_at=signed_at)


def read_signature(signature_path: Path, shown: str) -> ManifestSignature:
    """The signature in ``signature_path``; SignatureRefused when missing or malformed."""
    try:
        raw = read_regular_file(signature_path, MAX_SIGNATURE_FILE_BYTES)
    except FileTooLarge:
        raise SignatureRefused(
            shown, SIGNATURE_MALFORMED,
            f"the signature file is larger than {MAX_SIGNATURE_FILE_BYTES} bytes") from None
    except UnreadableFile as error:
        if error.errno == errno.ENOENT:
            raise SignatureRefused(
                shown, SIGNATURE_MISSING,
                f"no signature file {signature_path} (sign with capc compile --sign-key)",
            ) from None
        raise SignatureRefused(
            shown, SIGNATURE_MISSING,
            f"cannot read the signature file {signature_path}: {error.strerror or error}",
        ) from None
    return parse_signature(raw, shown)


def check_signature(
    shown: str, digest: str, signature: ManifestSignature, trusted: Iterable[PublicKey]
) -> None:
    """Refuse (SignatureRefused) unless ``signature`` signs ``digest`` with a trusted key."""
    if signature.digest != digest:
        raise SignatureRefused(
            shown, SIGNATURE_FOR_ANOTHER_MANIFEST,
            f"the signature is for the manifest with digest {signature.digest}, but this "
            f"manifest's digest is {digest}")
    if signature.public_key.raw not in {key.raw for key in trusted}:
        raise SignatureRefused(
            shown, SIGNATURE_KEY_NOT_TRUSTED,
            f"signed by {signature.public_key.text}, which is not a trusted key")
    ed25519, invalid_signature = _ed25519()
    verifier = ed25519.Ed25519PublicKey.from_public_bytes(signature.public_key.raw)
    try:
        verifier.verify(signature.signature, signed_message(digest, signature.signed_at))
    except invalid_signature:
        raise SignatureRefused(
            shown, SIGNATURE_INVALID,
            f"the signature by {signature.public_key.text} does not verify: the signature "
            "file was altered or made for other bytes") from None


def verify_manifest_origin(
    shown: str,
    digest: str,
    *,
    trusted_keys: Iterable[str | os.PathLike[str] | PublicKey] | None,
    expected_digest: str | None,
    signature_path: str | os.PathLike[str] | None,
) -> ManifestSignature | None:
    """The loader's provenance checks: ``expected_digest`` first, then the signature.

    Returns the verified signature (None when no keys were given). ManifestError names
    ``digest`` for another digest and ``signature`` (a SignatureRefused carrying the
    reason) for any signature problem; ``trusted_keys`` that cannot be read are a
    ManifestError naming ``trusted_keys``.
    """
    if expected_digest is not None:
        if not isinstance(expected_digest, str) or not DIGEST_PATTERN.fullmatch(expected_digest):
            raise ManifestError(shown, "digest",
                                "expected_digest is not 'sha256:' and 64 lowercase hex digits")
        if digest != expected_digest:
            raise ManifestError(shown, "digest",
                                f"the manifest's digest is {digest}, not the expected "
                                f"{expected_digest}")
    if trusted_keys is None:
        return None
    try:
        trusted = parse_trusted_keys(trusted_keys)
    except PublicKeyError as error:
        raise ManifestError(shown, "trusted_keys", str(error)) from None
    if not trusted:
        raise SignatureRefused(shown, SIGNATURE_KEY_NOT_TRUSTED,
                               "trusted_keys is empty: no signature can be trusted")
    location = (Path(signature_path) if signature_path is not None
                else signature_path_for(shown))
    signature = read_signature(location, shown)
    check_signature(shown, digest, signature, trusted)
    return signature


def _ed25519() -> tuple[Any, type[Exception]]:
    """The ``cryptography`` Ed25519 module and its InvalidSignature (imported on use)."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - cryptography is a dev dependency
        raise ImportError(INSTALL_HINT) from None
    return ed25519, InvalidSignature


def _pem_public_key(data: bytes, shown: str) -> PublicKey:
    if b"PRIVATE KEY" in data:
        raise PublicKeyError(
            f"{shown} holds a private key: trust the public key instead (capc keygen "
            "printed it as 'ed25519:BASE64')")
    ed25519, _ = _ed25519()
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise PublicKeyError(f"{shown} is not a PEM public key") from None
    except Exception as error:  # cryptography's UnsupportedAlgorithm
        raise PublicKeyError(f"{shown} is not a usable public key ({type(error).__name__})"
                             ) from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise PublicKeyError(f"{shown} is not an Ed25519 public key")
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(raw)


def _inline_public_key(text: str) -> PublicKey | None:
    if not text.startswith(PUBLIC_KEY_PREFIX):
        return None
    raw = _strict_base64(text[len(PUBLIC_KEY_PREFIX):])
    return PublicKey(raw) if raw is not None and len(raw) == PUBLIC_KEY_BYTES else None


def _strict_base64(text: str) -> bytes | None:
    try:
        decoded = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error, ValueError):
        return None
    # One spelling per value: a non-canonical encoding (stray padding bits) is refused.
    return decoded if base64.b64encode(decoded).decode("ascii") == text else None


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
