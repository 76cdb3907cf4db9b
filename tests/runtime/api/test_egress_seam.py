"""The seam between an api tool and egress is two values: one request, one set of limits.

A recording client wraps a real egress client (requests reach a real server on
127.0.0.1) and keeps what each attempt handed to ``send``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, StaticSettings
from compiler.runtime.api.tool import build_api_tool, make_blueprint
from compiler.runtime.api.tool_call import DEADLINE_GRACE_SECONDS
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.call import (
    CONNECTION_RETRIES,
    MAX_REDIRECTS,
    CallLimits,
    HttpClient,
    HttpResponse,
    OutgoingRequest,
    UploadedFile,
)
from compiler.runtime.egress.client import EgressClient, build_egress_client
from compiler.runtime.manifest.read import read_manifest
from tests.support.runtime import api_capability, write_manifest
from tests.support.scripted_server import Reply, ScriptedServer, scripted_server

KEY = "key-0a1b2c3d4e5f"
TIMEOUT = 10.0


class RecordingClient:
    """An HttpClient that keeps every (request, limits) pair and sends it for real."""

    def __init__(self, client: EgressClient) -> None:
        self.client = client
        self.sent: list[tuple[OutgoingRequest, CallLimits]] = []

    async def send(
        self,
        request: OutgoingRequest,
        limits: CallLimits,
        *,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        self.sent.append((request, limits))
        return await self.client.send(request, limits, on_redirect=on_redirect, on_sent=on_sent)

    async def aclose(self) -> None:
        await self.client.aclose()


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


async def sent_by_one_call(tmp_path: Path, entry: dict[str, Any]) -> tuple[str, RecordingClient]:
    data = read_manifest(write_manifest(tmp_path / "m.json", [entry]))
    recording = RecordingClient(build_egress_client(EgressPolicy(allow_private_networks=True)))
    client: HttpClient = recording  # the protocol the tool is typed against
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with recording.client:
        tool = await build_api_tool(make_blueprint(data.capabilities["lookup"]), ctx, client)
        text = str(await tool.ainvoke({"q": "x"}))
    return text, recording


def lookup(url: str, **api: Any) -> dict[str, Any]:
    entry = api_capability(
        "lookup", url, properties={"q": {"type": "string"}},
        arguments={"q": {"bindings": ["query"], "type": "string"}},
        headers={"X-Key": "${KEY}", "Accept": "application/json"}, placeholders=["KEY"],
        timeout=TIMEOUT, max_response_bytes=4096,
    )
    entry["api"].update(api)
    return entry


async def test_one_call_hands_egress_one_request_and_its_limits(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/find", Reply(body=b'{"found": 1}'))
    text, recording = await sent_by_one_call(tmp_path, lookup(url))
    assert json.loads(text) == {"found": 1}
    ((request, limits),) = recording.sent
    assert (request.method, request.url) == ("GET", url + "?q=x")
    assert dict(request.headers) == {"X-Key": KEY, "Accept": "application/json"}
    assert request.content is None and request.files == ()
    # The limits come from the manifest: only the header filled from a setting is secret.
    assert limits.secret_headers == {"X-Key"} and not limits.secret_body
    assert limits.max_response_bytes == 4096 and limits.truncate_response
    assert limits.max_redirects == MAX_REDIRECTS
    assert limits.connection_retries == CONNECTION_RETRIES
    assert 0 < limits.timeout <= TIMEOUT + DEADLINE_GRACE_SECONDS
    assert scripted.to("/find")[0].headers["X-Key"] == KEY


async def test_every_attempt_of_a_retried_call_sends_the_same_request(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    busy = Reply(503, b'{"e": 1}')
    url = scripted.script("/put", busy, Reply(body=b'{"ok": 1}'))
    retry = {"attempts": 3, "on_errors": [503], "backoff": 0.01,
             "idempotency_key": "Idempotency-Key"}
    entry = lookup(url, method="POST", retry=retry, body_template={"token": "${KEY}"})
    text, recording = await sent_by_one_call(tmp_path, entry)
    assert json.loads(text) == {"ok": 1}
    (first, first_limits), (second, second_limits) = recording.sent
    # One request value for the whole call: the idempotency key is drawn once.
    assert first is second
    assert dict(first.headers)["Idempotency-Key"]
    assert json.loads(first.content or b"") == {"token": KEY}
    arrived = [arrival.headers["Idempotency-Key"] for arrival in scripted.to("/put")]
    assert arrived == [dict(first.headers)["Idempotency-Key"]] * 2
    # The tool retries itself, so egress does not; the body holds a setting.
    for limits in (first_limits, second_limits):
        assert limits.connection_retries == 0 and limits.secret_body
    assert second_limits.timeout <= first_limits.timeout


def test_limits_narrow_per_attempt_and_keep_the_rest() -> None:
    limits = CallLimits(timeout=30.0, max_response_bytes=10, truncate_response=True,
                        secret_headers=frozenset({"X-Key"}), secret_body=True)
    narrowed = limits.within(2.5, 3)
    assert (narrowed.timeout, narrowed.max_redirects) == (2.5, 3)
    assert narrowed == CallLimits(timeout=2.5, max_redirects=3, max_response_bytes=10,
                                  truncate_response=True, secret_headers=frozenset({"X-Key"}),
                                  secret_body=True)


def test_the_request_values_show_names_and_sizes_only() -> None:
    upload = UploadedFile("doc", "notes.txt", b"private " + KEY.encode(), "text/plain")
    request = OutgoingRequest("POST", f"https://api.example/x?key={KEY}", (("X-Key", KEY),),
                              content=KEY.encode(), form_fields=(("token", KEY),),
                              files=(upload,))
    for text in (repr(request), repr(upload)):
        assert KEY not in text and "private" not in text
    assert "X-Key" in repr(request) and "notes.txt" in repr(upload)
