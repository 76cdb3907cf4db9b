"""The built-in OAuth resource server: each kind of token, signed per case with real keys.

The JWKS comes from a real loopback server; the guarded endpoint is a Starlette app that
asks the authenticator exactly as ``capc serve`` does and echoes the identity it got.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from compiler.runtime.serve.auth import ResourceServer, ResourceServerSettings
from compiler.runtime.serve.auth_keys import KeySource
from compiler.runtime.serve.identity import Identity
from tests.support.oauth import (
    ISSUER,
    PUBLIC_URL,
    JwksServer,
    SigningKey,
    claims,
    ec_key,
    forge,
    rsa_key,
    serving_jwks,
    sign,
)

RSA = rsa_key("rsa-1")
EC = ec_key("ec-1")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def guarded_app(server: ResourceServer) -> Starlette:
    async def endpoint(request: Request) -> Response:
        outcome = await server.authenticate(request)
        if isinstance(outcome, Response):
            return outcome
        await asyncio.sleep(0)  # let other users' requests interleave
        return JSONResponse({"user": outcome.user_id, "group": outcome.group_id,
                             "scopes": sorted(outcome.scopes)})

    routes = [Route("/mcp/{profile}", endpoint, methods=["POST"]),
              Route("/mcp", endpoint, methods=["POST"]), *server.metadata_routes()]
    return Starlette(routes=routes)


@pytest.fixture
def jwks() -> Iterator[JwksServer]:
    with serving_jwks(RSA, EC) as served:
        yield served


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server(jwks: JwksServer, clock: FakeClock) -> ResourceServer:
    settings = ResourceServerSettings(
        public_url=PUBLIC_URL, issuer=ISSUER, jwks=jwks.url, group_claim="org",
        profile_scopes={"sales": frozenset({"tools.sales"})})
    keys = KeySource(jwks.url, settings.algorithms, clock=clock, min_refresh_seconds=60)
    return ResourceServer(settings, keys)


@pytest.fixture
async def client(server: ResourceServer) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=guarded_app(server))
    async with httpx.AsyncClient(transport=transport, base_url=PUBLIC_URL) as http:
        yield http


async def call(client: httpx.AsyncClient, token: str | None,
               path: str = "/mcp/support") -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return await client.post(path, headers=headers, json={})


def challenge(reply: httpx.Response) -> str:
    return reply.headers["www-authenticate"]


async def test_a_good_rsa_token_names_the_user_group_and_scopes(client: httpx.AsyncClient):
    reply = await call(client, sign(RSA, claims(org="team-7", scope="tools.read a.b")))
    assert reply.status_code == 200
    assert reply.json() == {"user": "user-1", "group": "team-7", "scopes": ["a.b", "tools.read"]}


async def test_a_good_ec_token_and_an_endpoint_audience(client: httpx.AsyncClient):
    token = sign(EC, claims(aud=PUBLIC_URL + "/mcp/support", sub="user-ec", scp=["x"],
                            scope=None))
    reply = await call(client, token)
    assert reply.status_code == 200, reply.text
    assert reply.json()["user"] == "user-ec" and reply.json()["scopes"] == ["x"]


async def test_no_token_is_a_challenge_pointing_at_the_endpoint_metadata(
        client: httpx.AsyncClient):
    reply = await call(client, None, "/mcp/sales")
    assert reply.status_code == 401
    assert challenge(reply) == ('Bearer resource_metadata="https://tools.example.test'
                                '/.well-known/oauth-protected-resource/mcp/sales"')


@pytest.mark.parametrize(("payload", "reason"), [
    (claims(exp=1_000_000_000, iat=999_999_000), "the token has expired"),
    (claims(nbf=4_000_000_000), "the token is not valid yet"),
    (claims(aud="https://other.example.test"), "the token is not for this resource"),
    (claims(aud=PUBLIC_URL + "/mcp/sales"), "the token is not for this resource"),
    (claims(iss="https://evil.example.test"), "the token is from another issuer"),
    (claims(exp=None), "the token is invalid"),
    (claims(sub=None), "the token is invalid"),
    (claims(sub=["a", "b"]), "the token is invalid"),
])
async def test_refused_claims_are_invalid_tokens(client: httpx.AsyncClient,
                                                 payload: dict[str, Any], reason: str):
    reply = await call(client, sign(RSA, payload))
    assert reply.status_code == 401
    assert challenge(reply).startswith('Bearer error="invalid_token", ')
    assert f'error_description="{reason}"' in challenge(reply)
    assert 'resource_metadata="https://tools.example.test/.well-known/' \
           'oauth-protected-resource/mcp/support"' in challenge(reply)


async def test_alg_none_is_refused(client: httpx.AsyncClient):
    token = forge({"alg": "none", "typ": "JWT", "kid": RSA.kid}, claims(), None)
    reply = await call(client, token)
    assert reply.status_code == 401
    assert "the token's algorithm is not allowed" in challenge(reply)


@pytest.mark.parametrize("key", [RSA, EC], ids=["rsa", "ec"])
async def test_hs256_keyed_with_the_public_key_is_refused(client: httpx.AsyncClient,
                                                          key: SigningKey):
    for secret in (key.public_pem(), json.dumps(key.jwk()).encode()):
        token = forge({"alg": "HS256", "typ": "JWT", "kid": key.kid}, claims(), secret)
        reply = await call(client, token)
        assert reply.status_code == 401
        assert "the token's algorithm is not allowed" in challenge(reply)


async def test_a_token_signed_by_one_key_but_naming_another_is_refused(
        client: httpx.AsyncClient):
    stranger = rsa_key("rsa-1")  # same kid, different key: the signature fails
    reply = await call(client, sign(stranger, claims()))
    assert reply.status_code == 401
    assert "the token's signature does not verify" in challenge(reply)
    # An RS256 key named in an ES256 header is not looked up across families.
    reply = await call(client, sign(EC, claims(), kid=RSA.kid))
    assert reply.status_code == 401
    assert "no configured key matches the token" in challenge(reply)


async def test_a_tampered_payload_is_refused(client: httpx.AsyncClient):
    header, _, signature = sign(RSA, claims(sub="user-1")).split(".")
    forged = forge({"alg": "RS256", "kid": RSA.kid}, claims(sub="admin"), None)
    token = ".".join([header, forged.split(".")[1], signature])
    reply = await call(client, token)
    assert reply.status_code == 401
    assert "the token's signature does not verify" in challenge(reply)


@pytest.mark.parametrize("token", ["x" * 20_000, "not a jwt", "a.b", "ä.b.c", "a.b.c.d"])
async def test_malformed_and_oversized_tokens_are_refused(client: httpx.AsyncClient,
                                                          token: str):
    reply = await client.post("/mcp/support", json={},
                              headers={"Authorization": "Bearer " + token}
                              if token.isascii() else {"Authorization": b"Bearer \xc3"})
    assert reply.status_code == 401
    assert "invalid_token" in challenge(reply)


async def test_a_missing_scope_is_forbidden_with_the_scope_named(client: httpx.AsyncClient):
    reply = await call(client, sign(RSA, claims(scope="tools.read")), "/mcp/sales")
    assert reply.status_code == 403
    assert challenge(reply) == (
        'Bearer error="insufficient_scope", error_description="the token lacks a scope this '
        'endpoint requires", scope="tools.sales", resource_metadata="https://tools.example.test'
        '/.well-known/oauth-protected-resource/mcp/sales"')
    granted = await call(client, sign(RSA, claims(aud=PUBLIC_URL + "/mcp/sales",
                                                  scope="tools.sales")), "/mcp/sales")
    assert granted.status_code == 200
    # The whole manifest needs every profile's scopes.
    whole = await call(client, sign(RSA, claims(scope="tools.read")), "/mcp")
    assert whole.status_code == 403


async def test_an_unknown_kid_refreshes_once_then_waits(client: httpx.AsyncClient,
                                                        jwks: JwksServer, clock: FakeClock):
    assert (await call(client, sign(RSA, claims()))).status_code == 200
    assert jwks.fetches == 1
    rotated = rsa_key("rsa-2")
    jwks.keys.append(rotated.jwk())
    clock.now += 61
    assert (await call(client, sign(rotated, claims()))).status_code == 200
    assert jwks.fetches == 2
    # Made-up key ids: no fetch until the rate limit allows one more.
    for number in range(20):
        reply = await call(client, sign(RSA, claims(), kid=f"forged-{number}"))
        assert reply.status_code == 401
    assert jwks.fetches == 2
    clock.now += 61
    assert (await call(client, sign(RSA, claims(), kid="forged-x"))).status_code == 401
    assert jwks.fetches == 3


async def test_concurrent_users_never_cross(client: httpx.AsyncClient, jwks: JwksServer):
    tokens = {f"user-{n}": sign(RSA if n % 2 else EC, claims(sub=f"user-{n}", org=f"g-{n}"))
              for n in range(60)}

    async def one(user: str) -> tuple[str, dict[str, Any]]:
        reply = await call(client, tokens[user])
        return user, reply.json()

    results = await asyncio.gather(*(one(user) for user in tokens for _ in range(3)))
    for user, body in results:
        assert body["user"] == user and body["group"] == "g-" + user.split("-")[1]
    assert jwks.fetches == 1  # concurrent first requests share one fetch


async def test_no_token_or_claim_value_reaches_a_log_or_a_reply(
        client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture):
    secret_sub = "sub-SECRET-4711"
    tokens = [sign(RSA, claims(sub=secret_sub, exp=1_000_000_000, iat=999_999_000)),
              sign(RSA, claims(sub=secret_sub, aud="https://x.test")),
              sign(RSA, claims(sub=secret_sub), kid="kid-SECRET-4711"),
              sign(RSA, claims(sub=secret_sub)) + "x"]
    with caplog.at_level(logging.DEBUG, logger="capc.serve.auth"):
        for token in tokens:
            reply = await call(client, token)
            assert reply.status_code == 401
            shown = reply.text + json.dumps(dict(reply.headers))
            assert "SECRET" not in shown and token not in shown
    assert caplog.records and "SECRET" not in caplog.text
    assert all(token not in caplog.text for token in tokens)
    assert "SECRET" not in repr(Identity(user_id="u", claims={"sub": secret_sub}))
