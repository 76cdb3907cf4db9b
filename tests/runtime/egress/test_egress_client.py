"""The egress client against real loopback servers: redirects, secrets, retries, faults, caps.

Private networks are allowed here (the servers are on 127.0.0.1); the policy's refusals
are the SSRF matrix's subject.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from urllib.parse import quote

import pytest

from compiler.runtime.egress.addresses import EgressPolicy, IPAddress
from compiler.runtime.egress.call import CallLimits, OutgoingRequest, UploadedFile
from compiler.runtime.egress.client import EgressClient, build_egress_client
from compiler.runtime.egress.egress_errors import (
    EgressConnectionError,
    EgressError,
    EgressRefused,
    EgressTimeout,
    InvalidRequest,
    RedirectRefused,
    ResponseTooLarge,
    TooManyRedirects,
)
from tests.support.loopback import BOMB_DECODED_BYTES, LoopbackServer

SECRET = "sk-live-0123456789abcdef"
HANG_GUARD = 120  # seconds: only a regression that ignores a timeout ever reaches it


def open_client(**options: object) -> EgressClient:
    return build_egress_client(EgressPolicy(allow_private_networks=True), **options)  # type: ignore[arg-type]


def redirect_url(server: LoopbackServer, to: str, status: int = 302) -> str:
    return server.url(f"/redirect?status={status}&to={quote(to)}")


async def test_cross_origin_redirect_drops_secret_headers(
    server: LoopbackServer, other_server: LoopbackServer
) -> None:
    headers = {"X-Api-Key": SECRET, "Authorization": f"Bearer {SECRET}", "X-Trace": "t-1"}
    async with open_client() as client:
        response = await client.request(
            "GET", redirect_url(server, other_server.url("/echo")), headers=headers,
            secret_headers={"x-api-key"},
        )
    assert response.status_code == 200 and response.redirects == 1
    assert server.requests[0].headers["X-Api-Key"] == SECRET  # the declared origin got it
    (arrived,) = other_server.requests
    assert "X-Api-Key" not in arrived.headers and "Authorization" not in arrived.headers
    assert arrived.headers["X-Trace"] == "t-1"
    assert SECRET not in response.text()


async def test_same_origin_redirect_keeps_secret_headers(server: LoopbackServer) -> None:
    async with open_client() as client:
        response = await client.request(
            "GET", redirect_url(server, "/echo"), headers={"X-Api-Key": SECRET},
            secret_headers={"X-Api-Key"},
        )
    assert response.json()["headers"]["X-Api-Key"] == SECRET


@pytest.mark.parametrize(
    ("status", "method", "sent_method", "body_kept"),
    [(301, "POST", "GET", False), (302, "POST", "GET", False), (303, "PUT", "GET", False),
     (303, "DELETE", "GET", False), (303, "HEAD", "HEAD", True), (301, "PUT", "PUT", True),
     (307, "POST", "POST", True), (308, "PATCH", "PATCH", True)],
)
async def test_redirect_method_rewriting_follows_browsers(
    server: LoopbackServer, status: int, method: str, sent_method: str, body_kept: bool
) -> None:
    body = None if method == "HEAD" else b'{"a": 1}'
    async with open_client() as client:
        await client.request(
            method, redirect_url(server, "/echo", status), content=body,
            headers={"Content-Type": "application/json"},
        )
    first, second = server.requests
    assert first.method == method and second.method == sent_method
    assert second.body == ((body or b"") if body_kept else b"")
    assert ("Content-Type" in second.headers) is body_kept


async def test_secret_body_is_never_resent_to_another_origin(
    server: LoopbackServer, other_server: LoopbackServer
) -> None:
    async with open_client() as client:
        with pytest.raises(RedirectRefused) as refused:
            await client.request(
                "POST", redirect_url(server, other_server.url("/echo"), 307),
                content=json.dumps({"token": SECRET}), secret_body=True,
            )
    assert other_server.requests == []
    assert SECRET not in str(refused.value)


async def test_at_most_five_redirects(server: LoopbackServer) -> None:
    async with open_client() as client:
        response = await client.request("GET", server.url("/chain?n=4"))
        assert response.status_code == 200 and response.redirects == 5
        server.requests.clear()
        with pytest.raises(TooManyRedirects):
            await client.request("GET", server.url("/chain?n=5"))
    assert len(server.requests) == 6  # the first request and five redirects, no seventh


@pytest.mark.parametrize(
    "location",
    ["file:///etc/passwd", "ftp://example.com/", "http://[::1/", "javascript:alert(1)", "data:,x"],
)
async def test_redirect_to_a_non_http_url_is_refused(server: LoopbackServer, location: str) -> None:
    async with open_client() as client:
        with pytest.raises(RedirectRefused):
            await client.request("GET", redirect_url(server, location))


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_unsafe_methods_are_never_retried(server: LoopbackServer, method: str) -> None:
    async with open_client() as client:
        with pytest.raises(EgressConnectionError):
            await client.send(OutgoingRequest(method, server.url("/reset"), (), content=b"x"),
                              CallLimits(connection_retries=3))
    assert len(server.requests) == 1


async def test_get_is_retried_once_on_a_reset(server: LoopbackServer) -> None:
    async with open_client() as client:
        with pytest.raises(EgressConnectionError):
            await client.request("GET", server.url("/reset"))
    assert [request.method for request in server.requests] == ["GET", "GET"]


@pytest.mark.parametrize(
    ("path", "error"),
    [("/reset", EgressConnectionError), ("/stall", EgressTimeout),
     ("/stall-body", EgressTimeout), ("/truncated", EgressConnectionError)],
)
async def test_faulty_servers_give_a_clean_error_within_the_timeout(
    server: LoopbackServer, path: str, error: type[EgressError]
) -> None:
    # A stall lasts until the server stops: without the timeout the request would never
    # end, so the error type alone proves the timeout cut it (no clock needed).
    async with open_client() as client:
        with pytest.raises(error):
            await client.request("GET", server.url(path), timeout=0.5)
        assert client.pool().active == 0


async def test_a_stalled_resolver_counts_against_the_timeout() -> None:
    async def stalled(host: str, port: int) -> list[IPAddress]:
        # Answers only once a regression let the call outlive its timeout (a hang guard):
        # then the empty answer makes a "cannot resolve" error, not a timeout.
        await asyncio.sleep(HANG_GUARD)
        return []

    async with open_client(resolver=stalled) as client:
        with pytest.raises(EgressTimeout):
            await client.request("GET", "http://slow-dns.test/", timeout=0.3)


async def test_a_closed_port_is_a_connection_error(server: LoopbackServer) -> None:
    async with open_client() as client:
        with pytest.raises(EgressConnectionError):
            await client.request("GET", "http://127.0.0.1:1/")


async def test_gzip_bomb_is_stopped_at_the_cap(server: LoopbackServer, gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 256 * 1024 and BOMB_DECODED_BYTES == 200 * 1024 * 1024
    tracemalloc.start()
    try:
        async with open_client() as client:
            with pytest.raises(ResponseTooLarge):
                await client.request("GET", server.url("/gzip-bomb"), max_response_bytes=1 << 20)
            assert client.pool().active == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak


async def test_compressed_bodies_within_the_cap_are_decoded(server: LoopbackServer) -> None:
    async with open_client() as client:
        response = await client.request("GET", server.url("/gzip?n=5000"), max_response_bytes=5000)
    assert response.content == b"x" * 5000


@pytest.mark.parametrize("path", ["/big?n=2000000", "/chunked-big?n=4194304"])
async def test_plain_bodies_over_the_cap_are_refused(server: LoopbackServer, path: str) -> None:
    async with open_client() as client:
        with pytest.raises(ResponseTooLarge):
            await client.request("GET", server.url(path), max_response_bytes=1 << 20)
        assert client.pool().active == 0


@pytest.mark.parametrize(
    "headers",
    [{"X-Api-Key": f"{SECRET}\r\nX-Injected: 1"}, {"X-Api-Key": f"{SECRET}\n"},
     {"X-Api-Key": f"{SECRET}\x00"}, {"X Bad": "v"}, {"X-Api-Key:": "v"}],
)
async def test_header_injection_is_refused_before_sending(
    server: LoopbackServer, headers: dict[str, str]
) -> None:
    async with open_client() as client:
        with pytest.raises(InvalidRequest) as refused:
            await client.request("GET", server.url("/echo"), headers=headers)
    assert server.requests == []
    assert SECRET not in str(refused.value)


async def test_caller_headers_cannot_ask_for_encodings_the_cap_cannot_bound(
    server: LoopbackServer,
) -> None:
    async with open_client() as client:
        echoed = (await client.request(
            "GET", server.url("/echo"), headers={"accept-encoding": "br", "user-agent": "mine"}
        )).json()
    assert echoed["headers"]["Accept-Encoding"] == "gzip, deflate"
    assert echoed["headers"]["user-agent"] == "mine"
    lines = [name.lower() for name, _ in server.requests[-1].header_lines]
    assert lines.count("user-agent") == 1 and lines.count("accept-encoding") == 1


async def test_cookies_never_ride_along(server: LoopbackServer) -> None:
    async with open_client() as client:
        await client.request("GET", server.url("/set-cookie"))
        echoed = (await client.request("GET", server.url("/echo"))).json()
    assert "Cookie" not in echoed["headers"]


async def test_environment_proxies_are_ignored(
    server: LoopbackServer, other_server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, other_server.url(""))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with open_client() as client:
        assert (await client.request("GET", server.url("/ok"))).status_code == 200
    assert len(server.requests) == 1 and other_server.requests == []


async def test_error_messages_never_carry_paths_queries_or_header_values(
    server: LoopbackServer,
) -> None:
    secret_query = f"/p?key={SECRET}"
    failing = [
        (EgressPolicy(), server.url(secret_query)),
        (EgressPolicy(allow_private_networks=True), f"http://127.0.0.1:1{secret_query}"),
        (EgressPolicy(allow_private_networks=True), server.url(f"/stall?key={SECRET}")),
        (EgressPolicy(allow_private_networks=True), server.url(f"/big?n=3000000&key={SECRET}")),
        (EgressPolicy(allow_private_networks=True),
         redirect_url(server, f"http://169.254.169.254/?key={SECRET}")),
    ]
    messages = []
    for policy, url in failing:
        async with build_egress_client(policy) as client:
            with pytest.raises(EgressError) as failed:
                await client.request(
                    "GET", url, headers={"X-Api-Key": SECRET}, secret_headers={"X-Api-Key"},
                    timeout=0.5, max_response_bytes=1 << 20,
                )
        messages.append(str(failed.value))
    assert len({type(message) for message in messages}) == 1
    for message in messages:
        assert SECRET not in message and "/p" not in message and "key=" not in message
    assert isinstance(messages[0], str) and "refused" in messages[0]


async def test_a_refusal_names_the_address_class(server: LoopbackServer) -> None:
    async with build_egress_client(EgressPolicy()) as client:
        with pytest.raises(EgressRefused) as refused:
            await client.request("GET", server.url("/ok", host="0x7f.1"))
    assert "127.0.0.1 is a loopback address" in str(refused.value)


async def test_upload_names_and_media_types_are_sanitised(server: LoopbackServer) -> None:
    files = [
        UploadedFile("doc", "../../etc/pa\r\nss\"wd.html", b"<script>1</script>", "text/html"),
        UploadedFile("pic", "C:\\Users\\me\\.photo.png", b"\x89PNG", "image/png; charset=x"),
        UploadedFile("long", "a" * 400 + ".pdf", b"%PDF", "application/pdf"),
    ]
    async with open_client() as client:
        await client.request("POST", server.url("/echo"), files=files)
    body = server.requests[-1].body.decode("latin-1")
    assert 'name="doc"; filename="passwd.html"' in body
    assert 'name="pic"; filename="photo.png"' in body
    assert f'filename="{"a" * 251}.pdf"' in body
    content_types = [line for line in body.splitlines() if line.startswith("Content-Type")]
    assert content_types == [
        "Content-Type: application/octet-stream", "Content-Type: image/png",
        "Content-Type: application/pdf",
    ]
    assert "../" not in body and "\\" not in body
