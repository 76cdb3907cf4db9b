"""Bad input at the HTTP edge: every malformed request gets a clear error and the server
stays up, with nothing sent upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from compiler.runtime import ToolRegistry
from compiler.runtime.serve import ServeLimits, create_app
from tests.serve.conftest import echo_upstream, weather_capabilities
from tests.serve.support import (
    JSON_HEADERS,
    RunningServer,
    post,
    profile,
    rpc,
    running,
    write_served_manifest,
)
from tests.support.runtime import RecordingServer, recording_server

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[RunningServer, RecordingServer]]:
    with recording_server() as upstream:
        upstream.responder = echo_upstream
        manifest = write_served_manifest(
            tmp_path_factory.mktemp("bad") / "manifest.json",
            weather_capabilities(upstream.base_url),
            [profile("support", ["get_weather", "create_ticket"])])
        app = create_app(manifest, registry=ToolRegistry(), allow_private_networks=True,
                         limits=ServeLimits(max_body_bytes=LIMIT))
        with running(app) as server:
            yield server, upstream


def error_of(reply: httpx.Response) -> dict[str, object]:
    error: dict[str, object] = reply.json()["error"]
    return error


def still_answers(server: RunningServer) -> bool:
    reply = post(server.url("/mcp/support"), rpc("ping"))
    return reply.status_code == 200 and reply.json()["result"] == {}


@pytest.mark.parametrize(("body", "status", "code", "words"), [
    (b"{not json", 400, -32700, "not valid JSON"),
    (b"", 400, -32700, "not valid JSON"),
    (b"\xff\xfe\x00", 400, -32700, "not valid JSON"),
    (b"[" * 100_00 + b"]" * 100_00, 400, -32700, "not valid JSON"),
    (json.dumps([json.loads(rpc("ping")), json.loads(rpc("ping", request_id=2))]).encode(),
     400, -32600, "batches are not supported"),
    (b'"just a string"', 400, -32600, "JSON object"),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 400, -32600, '"jsonrpc" must be'),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', 400, -32600, "string or an integer"),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', 400, -32600, "string or an integer"),
    (rpc("ping", request_id=10**30), 400, -32600, "too large"),
    (rpc("ping", request_id="x" * 10_000), 400, -32600, "too long"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "' + b"m" * 1000 + b'"}', 400, -32600,
     "method must be"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}', 400, -32602,
     "params must be an object"),
])
def test_malformed_messages_are_refused_clearly(
        served: tuple[RunningServer, RecordingServer], body: bytes, status: int, code: int,
        words: str) -> None:
    server, upstream = served
    reply = post(server.url("/mcp/support"), body)
    assert reply.status_code == status
    error = error_of(reply)
    assert error["code"] == code and words in str(error["message"])
    assert still_answers(server)
    assert upstream.received == []


def test_a_huge_id_within_the_body_limit_is_answered_not_echoed(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, _ = served
    reply = post(server.url("/mcp/support"), rpc("ping", request_id="i" * 60_000))
    assert reply.status_code == 400 and len(reply.content) < 1000


def test_unknown_methods_and_bad_call_params(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, upstream = served
    url = server.url("/mcp/support")
    assert error_of(post(url, rpc("resources/list")))["code"] == -32601
    assert error_of(post(url, rpc("tools/call", {"arguments": {}})))["code"] == -32602
    assert error_of(post(url, rpc("tools/call", {"name": "get_weather",
                                                 "arguments": [1]})))["code"] == -32602
    assert error_of(post(url, rpc("tools/list", {"cursor": "abc"})))["code"] == -32602
    assert upstream.received == []


def test_bodies_over_the_limit_are_refused_unread(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, upstream = served
    padding = "p" * (LIMIT + 10)
    body = rpc("tools/call", {"name": "get_weather", "arguments": {"city": padding}})
    reply = post(server.url("/mcp/support"), body)
    assert reply.status_code == 413 and "at most" in str(error_of(reply)["message"])

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
        for _ in range(LIMIT // 1024 + 10):
            yield b" " * 1024
    streamed = httpx.post(server.url("/mcp/support"), content=chunks(), headers=JSON_HEADERS)
    assert streamed.status_code == 413
    assert upstream.received == [] and still_answers(server)


@pytest.mark.parametrize(("headers", "status"), [
    ({"content-type": "text/plain"}, 415),
    ({"content-type": "application/x-www-form-urlencoded"}, 415),
    ({"accept": "text/html"}, 406),
    ({"mcp-protocol-version": "1999-01-01"}, 400),
])
def test_wrong_headers_are_refused(served: tuple[RunningServer, RecordingServer],
                                   headers: dict[str, str], status: int) -> None:
    server, _ = served
    reply = post(server.url("/mcp/support"), rpc("ping"), headers)
    assert reply.status_code == status
    assert error_of(reply)["code"] == -32600


def test_no_stream_and_no_session_to_delete(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, _ = served
    assert httpx.get(server.url("/mcp/support")).status_code == 405
    assert httpx.delete(server.url("/mcp/support")).status_code == 405


def test_notifications_and_stray_responses_are_accepted_and_ignored(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, _ = served
    url = server.url("/mcp/support")
    note = post(url, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    stray = post(url, b'{"jsonrpc": "2.0", "id": "capc-elicit-none", "result": {}}')
    assert note.status_code == 202 and note.content == b""
    assert stray.status_code == 202


@pytest.mark.parametrize(("headers", "status"), [
    ({"host": "attacker.example"}, 421),
    ({"host": "127.0.0.1.nip.io:8000"}, 421),
    ({"origin": "http://attacker.example"}, 403),
    ({"origin": "null"}, 403),
])
def test_dns_rebinding_is_refused(served: tuple[RunningServer, RecordingServer],
                                  headers: dict[str, str], status: int) -> None:
    server, upstream = served
    reply = post(server.url("/mcp/support"),
                 rpc("tools/call", {"name": "get_weather", "arguments": {"city": "x"}}), headers)
    assert reply.status_code == status
    assert upstream.received == []


def test_loopback_origins_and_hosts_are_answered(
        served: tuple[RunningServer, RecordingServer]) -> None:
    server, _ = served
    for headers in ({"origin": f"http://localhost:{server.port}"},
                    {"host": f"localhost:{server.port}"}, {"origin": "http://127.0.0.1"}):
        assert post(server.url("/mcp/support"), rpc("ping"), headers).status_code == 200


def test_an_unknown_profile_is_refused_when_the_app_is_made(tmp_path: Path) -> None:
    manifest = write_served_manifest(tmp_path / "m.json", [], [])
    with pytest.raises(ValueError, match="no profile 'nobody'"):
        create_app(manifest, profiles=["nobody"], registry=ToolRegistry())
