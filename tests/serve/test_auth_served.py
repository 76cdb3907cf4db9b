"""The resource server in front of capc serve's app, under uvicorn on 127.0.0.1.

Tokens signed per user by a real key, the JWKS from a loopback server; 200 concurrent
calls of 40 users, each carrying its own bearer token, reach the upstream with that
user's own setting; the official SDK client lists tools with a token and is refused
without one; the metadata document the 401 names is served by the same app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from compiler.runtime import ToolRegistry
from compiler.runtime.serve import create_app
from compiler.runtime.serve.auth import ResourceServer, ResourceServerSettings
from tests.serve.support import JSON_HEADERS, RunningServer, rpc, sdk_session
from tests.serve.test_serve_load import TokenPerUser, whoami_manifest
from tests.support.oauth import ISSUER, JwksServer, claims, rsa_key, serving_jwks, sign
from tests.support.runtime import RecordingServer

KEY = rsa_key("served-1")
USERS = 40
CALLS = 200


@pytest.fixture
def jwks() -> Iterator[JwksServer]:
    with serving_jwks(KEY) as served:
        yield served


@pytest.fixture
def served(tmp_path: Path, upstream: RecordingServer, jwks: JwksServer
           ) -> Iterator[RunningServer]:
    manifest = whoami_manifest(tmp_path / "m.json", upstream.base_url)
    holder: dict[str, Any] = {}

    def app_for(public_url: str) -> Any:
        settings = ResourceServerSettings(
            public_url=public_url, issuer=ISSUER, jwks=jwks.url, group_claim="org",
            profile_scopes={"team": frozenset({"tools.team"})})
        holder["auth"] = ResourceServer(settings)
        return create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                          settings=TokenPerUser(), authenticator=holder["auth"])

    # The public URL names the port, known only once the socket is bound.
    server = RunningServer(None)
    server.server.config.app = app_for(server.base_url)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def token_for(server: RunningServer, user: str, scope: str = "tools.team") -> str:
    return sign(KEY, claims(sub=user, org="g-" + user, scope=scope,
                            aud=server.base_url + "/mcp/team"))


def test_each_user_reaches_the_upstream_with_their_own_setting(
        served: RunningServer, upstream: RecordingServer, jwks: JwksServer):
    tokens = {f"u{n}": token_for(served, f"u{n}") for n in range(USERS)}

    async def calls() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(timeout=120) as client:
            async def one(index: int) -> dict[str, Any]:
                user = f"u{index % USERS}"
                body = rpc("tools/call", {"name": "whoami", "arguments": {"who": user}},
                           request_id=index)
                reply = await client.post(served.url("/mcp/team"), content=body, headers={
                    **JSON_HEADERS, "authorization": "Bearer " + tokens[user]})
                return {"user": user, "status": reply.status_code, **reply.json()}
            return list(await asyncio.gather(*(one(index) for index in range(CALLS))))

    replies = asyncio.run(calls())
    assert [reply["status"] for reply in replies] == [200] * CALLS
    assert all(reply["result"]["isError"] is False for reply in replies)
    assert len(upstream.received) == CALLS
    for request in upstream.received:
        who = request.query.removeprefix("who=")
        assert request.header("authorization") == f"Bearer token-of-{who}"
    assert jwks.fetches == 1


def test_the_sdk_client_lists_with_a_token_and_is_refused_without(served: RunningServer):
    async def listed() -> list[str]:
        headers = {"authorization": "Bearer " + token_for(served, "alice")}
        async with sdk_session(served.url("/mcp/team"), headers=headers) as session:
            return [tool.name for tool in (await session.list_tools()).tools]

    assert asyncio.run(listed()) == ["whoami"]
    refused = httpx.post(served.url("/mcp/team"), content=rpc("tools/list"),
                         headers=JSON_HEADERS)
    assert refused.status_code == 401
    metadata_url = served.base_url + "/.well-known/oauth-protected-resource/mcp/team"
    assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    document = httpx.get(metadata_url).json()
    assert document["resource"] == served.base_url + "/mcp/team"
    assert document["authorization_servers"] == [ISSUER]
    assert document["scopes_supported"] == ["tools.team"]


def test_a_token_without_the_profile_scope_runs_nothing(served: RunningServer,
                                                        upstream: RecordingServer):
    body = rpc("tools/call", {"name": "whoami", "arguments": {"who": "mallory"}})
    reply = httpx.post(served.url("/mcp/team"), content=body, headers={
        **JSON_HEADERS, "authorization": "Bearer " + token_for(served, "mallory", "other")})
    assert reply.status_code == 403
    assert 'error="insufficient_scope"' in reply.headers["www-authenticate"]
    expired = sign(KEY, claims(sub="mallory", exp=1_000_000_000, iat=999_999_000,
                               aud=served.base_url))
    reply = httpx.post(served.url("/mcp/team"), content=body, headers={
        **JSON_HEADERS, "authorization": "Bearer " + expired})
    assert reply.status_code == 401 and "mallory" not in reply.text
    assert upstream.received == []
