"""Reading the verification keys: files and URLs, bounded, symmetric keys never used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.runtime.serve.auth_keys import (
    ASYMMETRIC_ALGORITHMS,
    MAX_JWKS_BYTES,
    KeySetError,
    KeySource,
    check_jwks_url,
    parse_key_set,
)
from tests.support.oauth import ec_key, rsa_key, serving_jwks

RSA = rsa_key("r")
EC = ec_key("e")


def test_a_jwks_file_gives_each_key_the_algorithms_of_its_family(tmp_path: Path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [RSA.jwk(), EC.jwk()]}))
    keys = KeySource(str(path), ASYMMETRIC_ALGORITHMS)
    held = sorted(keys._keys.keys) if keys._keys else []
    assert held == [("e", "ES256"), ("r", "PS256"), ("r", "PS384"), ("r", "PS512"),
                    ("r", "RS256"), ("r", "RS384"), ("r", "RS512")]


def test_a_declared_alg_narrows_the_key_and_symmetric_keys_are_skipped():
    declared = {**RSA.jwk(), "alg": "PS256"}
    symmetric = {"kty": "oct", "kid": "s", "k": "c2VjcmV0"}
    encryption = {**EC.jwk(), "use": "enc"}
    raw = json.dumps({"keys": [declared, symmetric, encryption]}).encode()
    assert sorted(parse_key_set(raw, ASYMMETRIC_ALGORITHMS).keys) == [("r", "PS256")]


@pytest.mark.parametrize("raw", [
    b"not json", b"[]", b'{"keys": {}}', b'{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}',
    b'{"keys": [{"kty": "RSA", "n": "broken", "e": "AQAB"}]}',
    b'{"keys": []}' + b" " * MAX_JWKS_BYTES,
])
def test_an_unusable_jwks_is_refused_without_quoting_it(raw: bytes):
    with pytest.raises(KeySetError) as refused:
        parse_key_set(raw, ASYMMETRIC_ALGORITHMS)
    assert "c2VjcmV0" not in str(refused.value) and "broken" not in str(refused.value)


def test_a_missing_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(KeySetError, match="cannot read the JWKS"):
        KeySource(str(tmp_path / "absent.json"), ASYMMETRIC_ALGORITHMS)


@pytest.mark.parametrize("url", ["http://keys.example.test/jwks", "ftp://127.0.0.1/x",
                                 "https:///jwks"])
def test_a_jwks_url_is_https_or_loopback(url: str):
    with pytest.raises(KeySetError):
        check_jwks_url(url)


async def test_an_oversized_jwks_url_is_cut_off_and_retried_only_after_the_limit():
    now = [0.0]
    with serving_jwks(RSA) as jwks:
        jwks.body_override = b'{"keys": [' + b" " * (MAX_JWKS_BYTES + 10) + b"]}"
        keys = KeySource(jwks.url, ASYMMETRIC_ALGORITHMS, clock=lambda: now[0])
        with pytest.raises(KeySetError, match="larger than"):
            await keys.load()
        with pytest.raises(KeySetError, match="no JWKS could be read yet"):
            await keys.load()
        assert jwks.fetches == 1
        jwks.body_override = None
        now[0] += 61
        assert (await keys.load()).find("r", "RS256") is not None
        assert jwks.fetches == 2


async def test_a_failed_refresh_keeps_the_last_good_keys():
    now = [0.0]
    with serving_jwks(RSA) as jwks:
        keys = KeySource(jwks.url, ASYMMETRIC_ALGORITHMS, clock=lambda: now[0])
        assert (await keys.load()).find("r", "RS256") is not None
        jwks.body_override = b"garbage"
        now[0] += 61
        assert await keys.refresh_for_unknown_key() is not None
        assert (await keys.load()).find("r", "RS256") is not None
        assert jwks.fetches == 2
