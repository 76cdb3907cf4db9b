"""The RFC 9728 protected-resource metadata, at the root and at each endpoint's path."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette

from compiler.runtime.serve.auth import ResourceServer, ResourceServerSettings, metadata_url_for
from tests.support.oauth import ISSUER, rsa_key, serving_jwks


def resource_server(public_url: str) -> ResourceServer:
    with serving_jwks(rsa_key()) as jwks:
        settings = ResourceServerSettings(
            public_url=public_url, issuer=ISSUER, jwks=jwks.url,
            profile_scopes={"sales": frozenset({"tools.sales"}),
                            "ops": frozenset({"ops.read", "ops.write"})})
        return ResourceServer(settings)


async def fetch(server: ResourceServer, base: str, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=Starlette(routes=server.metadata_routes()))
    async with httpx.AsyncClient(transport=transport, base_url=base) as client:
        return await client.get(path)


@pytest.mark.parametrize(("path", "resource", "scopes"), [
    ("/.well-known/oauth-protected-resource", "https://tools.example.test",
     ["ops.read", "ops.write", "tools.sales"]),
    ("/.well-known/oauth-protected-resource/mcp", "https://tools.example.test/mcp",
     ["ops.read", "ops.write", "tools.sales"]),
    ("/.well-known/oauth-protected-resource/mcp/sales",
     "https://tools.example.test/mcp/sales", ["tools.sales"]),
    ("/.well-known/oauth-protected-resource/mcp/support",
     "https://tools.example.test/mcp/support", []),
])
async def test_each_endpoint_has_its_metadata_document(path: str, resource: str,
                                                       scopes: list[str]):
    reply = await fetch(resource_server("https://tools.example.test/"),
                        "https://tools.example.test", path)
    assert reply.status_code == 200
    assert reply.json() == {
        "resource": resource, "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"], "scopes_supported": scopes,
        "resource_name": "capc serve"}
    # RFC 9728 §3.3: the document's resource is the one its URL was formed from.
    assert metadata_url_for(resource) == "https://tools.example.test" + path


async def test_a_public_url_with_a_path_keeps_it_in_the_well_known_suffix():
    server = resource_server("https://example.test/tools")
    reply = await fetch(server, "https://example.test",
                        "/.well-known/oauth-protected-resource/tools/mcp/sales")
    assert reply.json()["resource"] == "https://example.test/tools/mcp/sales"
    assert metadata_url_for("https://example.test/tools/mcp/sales") == \
        "https://example.test/.well-known/oauth-protected-resource/tools/mcp/sales"


@pytest.mark.parametrize("path", [
    "/.well-known/oauth-protected-resource/admin",
    "/.well-known/oauth-protected-resource/mcp/a/b",
    "/.well-known/oauth-protected-resource/mcp/" + "p" * 200,
    "/.well-known/oauth-protected-resource/mcp/%22quote",
])
async def test_other_paths_have_no_metadata(path: str):
    reply = await fetch(resource_server("https://tools.example.test"),
                        "https://tools.example.test", path)
    assert reply.status_code == 404


@pytest.mark.parametrize("settings", [
    {"public_url": "ftp://x.test"}, {"public_url": "https://x.test/?q=1"},
    {"issuer": ""}, {"algorithms": frozenset({"HS256"})},
    {"algorithms": frozenset({"none"})}, {"algorithms": frozenset()},
    {"profile_scopes": {"sales": frozenset({'a"b'})}},
    {"profile_scopes": {"sales": frozenset({"a b"})}},
])
def test_settings_refuse_what_would_weaken_or_break_the_server(settings: dict[str, object]):
    good: dict[str, object] = {"public_url": "https://x.test", "issuer": ISSUER,
                               "jwks": "unused.json"}
    with pytest.raises(ValueError):
        ResourceServerSettings(**{**good, **settings})  # type: ignore[arg-type]
