"""SPEC §8 against a scripted server on 127.0.0.1: shaping, retries, budget, concurrency.

No assertion reads a clock. Retries are judged by what the server received and by the
waits the retry loop asked for (recorded as it makes them, and still waited for real);
a reply that must outlast a timeout is held until the test releases it, so the timeout
is the only way the call can end, however loaded the machine.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.api.tool import build_api_tool, make_blueprint
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.manifest.read import read_manifest
from tests.support.loopback import FakeDns
from tests.support.runtime import api_capability, write_manifest
from tests.support.scripted_server import Reply, ScriptedServer, scripted_server

KEY = "key-5f4e3d2c1b0a"


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the retry loop asks for, in order; each is still waited for real.

    The runtime's only ``asyncio.sleep`` of a positive delay is the retry loop's (anyio,
    under httpx, binds its own ``sleep`` at import and is not seen here).
    """
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float, result: Any = None) -> Any:
        if delay > 0:
            asked.append(delay)
        return await real_sleep(delay, result)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    return asked


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


def json_reply(value: Any, status: int = 200, **headers: str) -> Reply:
    extra = tuple((name.replace("_", "-"), value) for name, value in headers.items())
    return Reply(status, json.dumps(value).encode(),
                 (("Content-Type", "application/json"), *extra))


def capability(url: str, method: str = "GET", timeout: float = 10.0, **api: Any) -> dict:
    entry = api_capability(
        "lookup", url, properties={"q": {"type": "string"}},
        arguments={"q": {"bindings": ["query"], "type": "string"}},
        method=method, timeout=timeout, headers={"X-Key": "${KEY}"}, placeholders=["KEY"],
    )
    entry["api"].update(api)
    return entry


async def tools(tmp_path: Path, entry: dict, count: int = 1) -> tuple[Any, list[Any]]:
    manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                             registry=ToolRegistry(), allow_private_networks=True)
    found = []
    for user in range(count):
        ctx = RuntimeContext(user_id=user, settings=StaticSettings({"KEY": KEY}))
        found.append((await manifest.resolve(["lookup"], ctx)).tools[0])
    return manifest, found


async def call(tmp_path: Path, entry: dict, arguments: dict | None = None) -> str:
    manifest, (tool,) = await tools(tmp_path, entry)
    async with manifest:
        return str(await tool.ainvoke(arguments or {"q": "x"}))


SEARCH = {"total": 3, "results": [
    {"title": "One", "url": "https://a.example/1", "score": 0.9, "tags": ["a", "b", "c"],
     "html": "<div>noise</div>" * 20},
    {"title": "Two", "url": "https://a.example/2", "score": 0.8, "tags": [], "html": "x"},
    {"title": "Three", "url": "https://a.example/3", "score": 0.7, "tags": ["d"], "html": "y"},
]}


# --- options.response ------------------------------------------------------------------

async def test_select_returns_only_the_selected_fields(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/search", json_reply(SEARCH))
    text = await call(tmp_path, capability(url, response={
        "select": "results[].{title: title, url: url}", "max_items": None, "max_chars": None}))
    assert json.loads(text) == [{"title": t, "url": f"https://a.example/{i}"}
                                for i, t in enumerate(["One", "Two", "Three"], 1)]


async def test_max_items_cuts_every_list_and_says_how_many_were_left_out(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/search", json_reply(SEARCH))
    text = await call(tmp_path, capability(url, response={
        "select": "results[].{title: title, tags: tags}", "max_items": 2, "max_chars": None}))
    body, note = text.split("\n\n")
    assert json.loads(body) == [{"title": "One", "tags": ["a", "b"]},
                                {"title": "Two", "tags": []}]
    assert note == ("[cut: lists are limited to 2 items (max_items); 2 items were left out: "
                    "@ (1 left out), @[0].tags (1 left out)]")


async def test_max_chars_cuts_the_text_with_a_note(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/search", json_reply(SEARCH))
    text = await call(tmp_path, capability(url, response={
        "select": None, "max_items": None, "max_chars": 50}))
    body, note = text.split("\n\n")
    assert body == json.dumps(SEARCH)[:50]
    assert note.startswith(f"[cut: this text is {len(json.dumps(SEARCH))} characters; the "
                           "first 50 are shown (max_chars 50)")


async def test_a_response_that_is_not_json_is_returned_as_text(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    page = Reply(200, b"<html>plain page</html>", (("Content-Type", "text/html"),))
    url = scripted.script("/page", page)
    text = await call(tmp_path, capability(url, response={
        "select": "results", "max_items": None, "max_chars": None}))
    assert text == "<html>plain page</html>\n\n[the response is not JSON, so it is shown as text]"


async def test_secrets_are_masked_before_select_and_before_every_cut(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    echoed = {"items": [{"note": "key " + KEY.replace("-", "\\u002d")},
                        {"note": KEY[:6] + "/" + KEY[6:]}],
              "path": "/x?k=" + KEY.lower()}
    url = scripted.script("/echo", Reply(200, json.dumps(echoed).replace("\\\\", "\\").encode()))
    for limit in range(5, 40):
        text = await call(tmp_path, capability(url, response={
            "select": "items[0].note", "max_items": None, "max_chars": limit}))
        body = text.split("\n\n")[0]
        assert KEY not in text and not any(body.endswith(KEY[:k]) for k in range(1, len(KEY)))
        assert body == "key [redacted]"[:limit] or body.startswith("key ")


# --- options.retry -----------------------------------------------------------------------

RETRY = {"attempts": 3, "on_errors": [429, 503, "connect"], "backoff": 0.05,
         "idempotency_key": None}


async def test_retry_after_in_seconds_spaces_the_attempts(
    scripted: ScriptedServer, tmp_path: Path, waits: list[float]
) -> None:
    url = scripted.script("/busy", json_reply({"e": 1}, 503, Retry_After="1"),
                          json_reply({"ok": 1}))
    text = await call(tmp_path, capability(url, retry=RETRY))
    assert json.loads(text) == {"ok": 1}
    assert len(scripted.to("/busy")) == 2
    assert waits == [1.0]  # one wait between the two, exactly what the server asked for


async def test_retry_after_as_an_http_date_is_measured_against_the_server_date(
    scripted: ScriptedServer, tmp_path: Path, waits: list[float]
) -> None:
    # The server's clock is an hour ahead of ours: only the difference of its dates counts.
    now = time.time() + 3600
    url = scripted.script("/busy", json_reply(
        {"e": 1}, 429, Date=email.utils.formatdate(now, usegmt=True),
        Retry_After=email.utils.formatdate(now + 2, usegmt=True)), json_reply({"ok": 1}))
    text = await call(tmp_path, capability(url, retry=RETRY))
    assert json.loads(text) == {"ok": 1}
    assert len(scripted.to("/busy")) == 2
    assert waits == [2.0]  # the two dates' difference, not an hour's less against our clock


async def test_a_retry_after_beyond_the_budget_is_not_waited_out(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/busy", json_reply({"e": 1}, 503, Retry_After="120"))
    manifest, (tool,) = await tools(tmp_path, capability(url, timeout=3.0, retry=RETRY))
    async with manifest:
        text = str(await tool.ainvoke({"q": "x"}))
    # Had it waited, its deadline would have ended the wait with a timeout text instead.
    assert text.startswith("Error: HTTP 503 from GET http://127.0.0.1")
    assert "it asked to retry after 120 s, beyond the tool's timeout" in text
    assert len(scripted.to("/busy")) == 1


async def test_retries_stop_where_the_budget_ends(
    scripted: ScriptedServer, tmp_path: Path, waits: list[float]
) -> None:
    url = scripted.script("/busy", json_reply({"e": 1}, 503))
    policy = {**RETRY, "attempts": 5, "backoff": 0.4}
    manifest, (tool,) = await tools(tmp_path, capability(url, timeout=1.5, retry=policy))
    async with manifest:
        text = str(await tool.ainvoke({"q": "x"}))
    arrivals = scripted.to("/busy")
    # Waits are 0.2-0.4, 0.4-0.8, 0.8-1.6 s: a fifth attempt can never fit in 1.5 s. Each
    # wait it asked for lies in its window, and together they fit the budget.
    assert 1 <= len(arrivals) <= 4, len(arrivals)
    assert all(0.2 * 2 ** index <= wait <= 0.4 * 2 ** index
               for index, wait in enumerate(waits)), waits
    assert sum(waits) < 1.5, waits
    # A wait always comes before an attempt; only an attempt the deadline kept from
    # leaving follows a wait without reaching the server.
    assert len(waits) in (len(arrivals) - 1, len(arrivals)), (waits, len(arrivals))
    origin = scripted.base_url
    if text.startswith("Error: HTTP 503"):
        # It stopped itself: every attempt was answered, and the text counts them.
        assert len(arrivals) >= 2 and f"; {len(arrivals)} attempts" in text
        assert len(waits) == len(arrivals) - 1
        assert "the next retry would start after" in text and "beyond the tool's timeout" in text
    else:
        # On a loaded machine the deadline may end an attempt instead: the text says which.
        assert text in (unanswered(origin, "1.5"), never_sent(origin, "1.5")), text


async def test_post_is_not_retried_without_an_idempotency_key(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/orders", json_reply({"e": 1}, 503), json_reply({"id": 7}))
    text = await call(tmp_path, capability(url, method="POST", retry=RETRY))
    assert text.startswith("Error: HTTP 503")
    assert len(scripted.to("/orders")) == 1


async def test_post_with_an_idempotency_key_is_retried_with_the_same_key(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/orders", json_reply({"e": 1}, 503), json_reply({"e": 1}, 429),
                          json_reply({"id": 7}), json_reply({"e": 1}, 503), json_reply({"id": 8}))
    entry = capability(url, method="POST", retry={**RETRY, "idempotency_key": "Idempotency-Key"})
    manifest, (tool,) = await tools(tmp_path, entry)
    async with manifest:
        assert json.loads(await tool.ainvoke({"q": "x"})) == {"id": 7}
        assert json.loads(await tool.ainvoke({"q": "x"})) == {"id": 8}
    keys = [arrival.header("Idempotency-Key") for arrival in scripted.to("/orders")]
    assert [arrival.method for arrival in scripted.to("/orders")] == ["POST"] * 5
    assert keys[0] == keys[1] == keys[2] and keys[3] == keys[4] and keys[0] != keys[3]
    assert all(key and len(key) == 32 for key in keys)


async def test_a_broken_connection_is_retried_when_connect_is_listed(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/flaky", Reply(reset=True), json_reply({"ok": 1}))
    assert json.loads(await call(tmp_path, capability(url, retry=RETRY))) == {"ok": 1}
    assert len(scripted.to("/flaky")) == 2
    scripted.script("/flaky", Reply(reset=True), json_reply({"ok": 1}))
    text = await call(tmp_path, capability(url, retry={**RETRY, "on_errors": [503]}))
    assert text.startswith("Error:") and len(scripted.to("/flaky")) == 3


async def test_redirects_count_across_attempts(scripted: ScriptedServer, tmp_path: Path) -> None:
    scripted.script("/r1", Reply(302, b"", (("Location", "/r2"),)))
    scripted.script("/r2", Reply(302, b"", (("Location", "/r3"),)))
    scripted.script("/r3", json_reply({"e": 1}, 503))
    text = await call(tmp_path, capability(scripted.base_url + "/r1", retry=RETRY))
    # Two hops per attempt: the third attempt has one of the five left.
    paths = [arrival.path.split("?")[0] for arrival in scripted.arrivals]
    assert paths == ["/r1", "/r2", "/r3"] * 2 + ["/r1", "/r2"]
    assert text.startswith("Error:") and "redirects" in text


async def test_a_retry_checks_the_address_again(scripted: ScriptedServer, tmp_path: Path) -> None:
    port = scripted.base_url.rsplit(":", 1)[1]
    scripted.script("/busy", json_reply({"e": 1}, 503, Connection="close"), json_reply({"ok": 1}))
    entry = capability(f"http://api.example:{port}/busy", retry=RETRY)
    data = read_manifest(write_manifest(tmp_path / "m.json", [entry]))
    # The name rebinds to the cloud metadata address after the first answer.
    dns = FakeDns({"api.example": [["127.0.0.1"], ["169.254.169.254"]]})
    client = build_egress_client(EgressPolicy(allow_private_networks=True), resolver=dns)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with client:
        tool = await build_api_tool(make_blueprint(data.capabilities["lookup"]), ctx, client)
        text = str(await tool.ainvoke({"q": "x"}))
    assert dns.calls == ["api.example", "api.example"]
    assert "refused" in text and len(scripted.to("/busy")) == 1


# --- options.max_concurrency ---------------------------------------------------------------

async def test_concurrency_never_exceeds_the_limit(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # Each request is answered only once another is in flight beside it: the limit is
    # reached (two at once) and never passed, however the calls are scheduled.
    url = scripted.script("/slow", Reply(together=threading.Barrier(2, timeout=30)))
    manifest, found = await tools(
        tmp_path, capability(url, timeout=60.0, max_concurrency=2), count=4)
    async with manifest:
        texts = await asyncio.gather(*(tool.ainvoke({"q": str(n)})
                                       for n in range(2) for tool in found))
    assert all(json.loads(text) == {"ok": True} for text in texts)
    assert len(scripted.to("/slow")) == 8 and scripted.max_in_flight == 2


async def test_without_a_limit_the_same_calls_overlap(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # The server answers none until all four are in flight: only overlapping calls succeed.
    url = scripted.script("/slow", Reply(together=threading.Barrier(4, timeout=30)))
    manifest, found = await tools(tmp_path, capability(url, timeout=60.0), count=4)
    async with manifest:
        texts = await asyncio.gather(*(tool.ainvoke({"q": "x"}) for tool in found))
    assert all(json.loads(text) == {"ok": True} for text in texts), texts
    assert scripted.max_in_flight == 4


def gave_up(limit: int, timeout: str) -> str:
    return (f"Error: lookup was not called: {limit} calls of this tool were in flight for its "
            f"whole timeout of {timeout} s; try again later")


def never_sent(origin: str, timeout: str) -> str:
    return (f"Error: lookup was not called: its timeout of {timeout} s ran out before the "
            f"request to {origin} was sent; try again later")


def unanswered(origin: str, timeout: str) -> str:
    return (f"Error: lookup failed: no complete response from {origin} within {timeout} s; "
            "try again later or ask for less")


async def test_a_call_waiting_for_a_slot_gives_up_within_its_timeout(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/slow", json_reply({"ok": 1}))
    manifest, (tool,) = await tools(
        tmp_path, capability(url, timeout=0.5, max_concurrency=1))
    limiter = tool.coroutine._blueprint.limiter
    async with manifest:
        # The test holds the only slot for the whole call: waiting is the one outcome.
        async with limiter.slot():
            text = str(await tool.ainvoke({"q": "b"}))
        assert limiter.in_flight == 0
        after = str(await tool.ainvoke({"q": "c"}))
    assert text == gave_up(1, "0.5")
    assert json.loads(after) == {"ok": 1}
    assert [arrival.path for arrival in scripted.to("/slow")] == ["/slow?q=c"]


async def test_a_call_whose_timeout_ends_before_its_request_left_says_it_was_not_sent(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # The lookup never answers: the deadline passes with nothing sent, whatever the load.
    port = scripted.base_url.rsplit(":", 1)[1]
    scripted.script("/slow", json_reply({"ok": 1}))
    entry = capability(f"http://stalled.example:{port}/slow", timeout=0.5)
    data = read_manifest(write_manifest(tmp_path / "m.json", [entry]))

    async def stalled_lookup(host: str, port: int) -> list[Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    client = build_egress_client(EgressPolicy(allow_private_networks=True),
                                 resolver=stalled_lookup)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with client:
        tool = await build_api_tool(make_blueprint(data.capabilities["lookup"]), ctx, client)
        text = str(await tool.ainvoke({"q": "x"}))
    assert text == never_sent(f"http://stalled.example:{port}", "0.5")
    assert scripted.arrivals == []


async def test_two_calls_for_one_slot_each_say_what_happened(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # The server answers nothing until both calls ended: only their deadlines end them.
    release = threading.Event()
    url = scripted.script("/slow", Reply(until=release))
    manifest, (first, second) = await tools(
        tmp_path, capability(url, timeout=1.0, max_concurrency=1), count=2)
    try:
        async with manifest:
            texts = await asyncio.gather(first.ainvoke({"q": "a"}), second.ainvoke({"q": "b"}))
    finally:
        release.set()
    # Both deadlines end together, so scheduling decides whether the waiter gets the slot in
    # the instant the holder lets it go, and whether it then sends before its own deadline.
    # Whatever happened, each text says it truly. (The server may still be holding the
    # first, abandoned request when the second arrives: its in-flight count proves nothing.)
    origin = scripted.base_url
    said = {gave_up(1, "1"): "waited", never_sent(origin, "1"): "unsent",
            unanswered(origin, "1"): "sent"}
    outcomes = sorted(said.get(str(text), str(text)) for text in texts)
    assert outcomes in (["sent", "waited"], ["sent", "sent"], ["sent", "unsent"],
                        ["unsent", "waited"], ["unsent", "unsent"]), texts
    # What reached the server was sent by a call that says so; an unsent call sent nothing.
    assert len(scripted.to("/slow")) <= outcomes.count("sent")
