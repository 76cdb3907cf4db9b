"""The verification keys of the built-in resource server: a JWKS from a file or a URL.

A JWKS is operator configuration, but a URL's answer still comes over the network: it is
read with a bound on size and time, keeps at most ``MAX_KEYS`` keys, and is fetched again
only when a token names a key it does not hold, at most once per ``min_refresh_seconds``
(a flood of tokens with made-up ``kid`` values costs one fetch, not one per token).
Symmetric keys (``kty: oct``) are never used: a resource server that accepts HS256 signed
with a public key is the classic algorithm-confusion hole.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import httpx
from jwt import PyJWK
from jwt.exceptions import PyJWKError

MAX_JWKS_BYTES = 256 * 1024
MAX_KEYS = 64
MAX_KID_CHARS = 256
MIN_RSA_BITS = 2048  # NIST SP 800-131A: shorter RSA keys are not acceptable for signatures

# The asymmetric algorithms a resource server accepts, and the keys each one needs.
RSA_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
CURVE_ALGORITHMS: Mapping[str, str] = MappingProxyType(
    {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512", "Ed25519": "EdDSA"})
ASYMMETRIC_ALGORITHMS = RSA_ALGORITHMS | frozenset(CURVE_ALGORITHMS.values())


class KeySetError(Exception):
    """A JWKS that cannot be read or holds no usable key; the message quotes no key."""


@dataclass(frozen=True, slots=True)
class KeySet:
    """Usable keys by ``(kid, alg)``; ``kid`` is ``""`` for a key published without one."""

    keys: Mapping[tuple[str, str], PyJWK] = field(default_factory=dict)

    def find(self, kid: str | None, algorithm: str) -> PyJWK | None:
        """The key for this token header, or None (no kid: only when exactly one fits)."""
        if kid is not None:
            return self.keys.get((kid, algorithm))
        fitting = [key for (_, alg), key in self.keys.items() if alg == algorithm]
        return fitting[0] if len(fitting) == 1 else None


def _algorithms_of(jwk: Mapping[str, Any], allowed: frozenset[str]) -> frozenset[str]:
    """The allowed algorithms this JWK may verify (empty for symmetric or unknown keys)."""
    kty, curve, declared = jwk.get("kty"), jwk.get("crv"), jwk.get("alg")
    if kty == "RSA":
        fitting = RSA_ALGORITHMS
    elif kty in ("EC", "OKP") and isinstance(curve, str) and curve in CURVE_ALGORITHMS:
        fitting = frozenset({CURVE_ALGORITHMS[curve]})
    else:
        return frozenset()
    if declared is not None:
        fitting = fitting & {declared} if isinstance(declared, str) else frozenset()
    return fitting & allowed


def parse_key_set(raw: bytes, allowed: frozenset[str]) -> KeySet:
    """Parse a JWKS document; keys that are symmetric, not for signing or broken are skipped."""
    if len(raw) > MAX_JWKS_BYTES:
        raise KeySetError(f"the JWKS is larger than {MAX_JWKS_BYTES} bytes")
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise KeySetError("the JWKS is not JSON") from None
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise KeySetError('the JWKS has no "keys" list')
    keys: dict[tuple[str, str], PyJWK] = {}
    for entry in entries[:MAX_KEYS]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kid = entry.get("kid", "")
        if not isinstance(kid, str) or len(kid) > MAX_KID_CHARS:
            continue
        for algorithm in sorted(_algorithms_of(entry, allowed)):
            try:
                key = PyJWK(entry, algorithm=algorithm)
            except (PyJWKError, ValueError, TypeError):
                continue  # a malformed key is skipped; the others still serve
            if entry.get("kty") != "RSA" or key.key.key_size >= MIN_RSA_BITS:
                keys[(kid, algorithm)] = key
    if not keys:
        raise KeySetError("the JWKS holds no asymmetric signing key for the allowed algorithms")
    return KeySet(MappingProxyType(keys))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def check_jwks_url(url: str) -> str:
    """The URL itself when it may serve keys: https, or plain http on loopback only."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and _is_loopback(host):
        return url
    raise KeySetError("a JWKS URL must be https (plain http only on a loopback host)")


class KeySource:
    """Where the keys come from, and the rate-limited refresh of a URL's keys."""

    def __init__(
        self,
        location: str,
        allowed: frozenset[str],
        *,
        timeout_seconds: float = 5.0,
        min_refresh_seconds: float = 60.0,
        max_age_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.is_url = location.startswith(("http://", "https://"))
        self._location = check_jwks_url(location) if self.is_url else location
        self._allowed = allowed
        self._timeout = timeout_seconds
        self._min_refresh = min_refresh_seconds
        self._max_age = max_age_seconds
        self._clock = clock
        self._transport = transport
        self._keys: KeySet | None = None
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0
        if not self.is_url:
            self._keys = parse_key_set(self._read_file(), allowed)

    def _read_file(self) -> bytes:
        path = Path(self._location)
        try:
            with path.open("rb") as handle:
                return handle.read(MAX_JWKS_BYTES + 1)
        except OSError as error:
            raise KeySetError(f"{path}: cannot read the JWKS ({error.strerror})") from None

    async def _fetch(self) -> KeySet:
        self.fetches += 1
        limits = httpx.Timeout(self._timeout)
        async with httpx.AsyncClient(timeout=limits, transport=self._transport,
                                     follow_redirects=False) as client:
            try:
                async with client.stream("GET", self._location,
                                         headers={"Accept": "application/json"}) as reply:
                    if reply.status_code != 200:
                        raise KeySetError(f"the JWKS URL answered {reply.status_code}")
                    body = bytearray()
                    async for chunk in reply.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_JWKS_BYTES:
                            raise KeySetError(
                                f"the JWKS is larger than {MAX_JWKS_BYTES} bytes")
            except httpx.HTTPError as error:
                raise KeySetError(f"the JWKS URL cannot be read ({type(error).__name__})") \
                    from None
        return parse_key_set(bytes(body), self._allowed)

    async def load(self) -> KeySet:
        """The keys to verify with, fetching a URL's keys the first time and when stale."""
        if self._keys is not None and not self._stale():
            return self._keys
        async with self._lock:
            if (self._keys is None or self._stale()) and self._may_fetch():
                await self._refresh()
        if self._keys is None:
            raise KeySetError("no JWKS could be read yet")
        return self._keys

    async def refresh_for_unknown_key(self) -> KeySet | None:
        """Fetch again for a key not held, unless a fetch happened too recently (then None)."""
        if not self.is_url:
            return None
        async with self._lock:
            if not self._may_fetch():
                return None
            await self._refresh()
            return self._keys

    def _may_fetch(self) -> bool:
        return (self._fetched_at is None
                or self._clock() - self._fetched_at >= self._min_refresh)

    def _stale(self) -> bool:
        return (self.is_url and self._fetched_at is not None
                and self._clock() - self._fetched_at >= self._max_age)

    async def _refresh(self) -> None:
        # The attempt counts against the rate limit even when it fails: a down key
        # server is not hammered once per request, and the last good keys stay.
        self._fetched_at = self._clock()
        try:
            self._keys = await self._fetch()
        except KeySetError:
            if self._keys is None:
                raise
