"""The shipped examples of each parameter shape (capabilities/api/, SPEC §10), compiled
from the tree and sent to a real server on 127.0.0.1: exact path, query and body bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.runtime import RecordingServer
from tests.support.structured import SHIPPED_SETTINGS, shipped_manifest


async def call(tmp_path: Path, server: RecordingServer, code: str,
               arguments: dict[str, Any]) -> str:
    manifest = load_manifest(shipped_manifest(tmp_path, server.base_url),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings(SHIPPED_SETTINGS))
    async with manifest:
        toolset = await manifest.resolve([code], ctx)
        (tool,) = toolset.tools
        return str(await tool.ainvoke(arguments))


async def test_search_issues_puts_arrays_and_an_object_in_the_query(
        tmp_path: Path, server: RecordingServer) -> None:
    reply = b'{"items": [{"number": 1, "title": "t", "state": "open"}]}'
    server.responder = lambda request: (200, {"Content-Type": "application/json"}, reply)
    answer = await call(tmp_path, server, "search_issues", {
        "owner": "acme", "repo": "app", "labels": ["bug", "docs"], "assignees": ["ana", "bo b"],
        "filter": {"state": "open", "since": "2026-01-01T00:00:00Z"}})
    assert json.loads(answer) == [{"number": 1, "title": "t", "state": "open"}]
    request = server.last()
    assert request.method == "GET"
    assert request.raw_path == (
        "/repos/acme/app/issues?assignees[]=ana&assignees[]=bo+b"
        "&filter[since]=2026-01-01T00%3A00%3A00Z&filter[state]=open&labels=bug,docs")
    assert request.header("Authorization") == "Bearer api-token-789"


async def test_create_checkout_sends_a_bracket_nested_form(
        tmp_path: Path, server: RecordingServer) -> None:
    answer = await call(tmp_path, server, "create_checkout", {
        "line_items": [{"price": "price_1", "quantity": 2}, {"price": "price_2"}],
        "metadata": {"order": "42", "note": "a&b=c"}})
    assert not answer.startswith("Error"), answer
    request = server.last()
    assert (request.method, request.raw_path) == ("POST", "/v1/checkout/sessions")
    assert request.header("Content-Type") == "application/x-www-form-urlencoded"
    assert request.body == (
        b"line_items[0][price]=price_1&line_items[0][quantity]=2"
        b"&line_items[1][price]=price_2&line_items[1][quantity]=1"
        b"&metadata[order]=42&metadata[note]=a%26b%3Dc&mode=payment")
    assert request.header("Idempotency-Key")


async def test_add_labels_under_strict_treats_null_as_not_sent(
        tmp_path: Path, server: RecordingServer) -> None:
    answer = await call(tmp_path, server, "add_labels", {
        "owner": "acme", "repo": "app", "number": 7, "labels": ["bug"], "reason": None})
    assert not answer.startswith("Error"), answer
    request = server.last()
    assert (request.method, request.raw_path) == ("POST", "/repos/acme/app/issues/7/labels")
    assert request.body == b'{"labels":["bug"]}'


async def test_record_event_keeps_native_objects_and_arrays_in_the_template(
        tmp_path: Path, server: RecordingServer) -> None:
    answer = await call(tmp_path, server, "record_event", {
        "name": "purchase", "tags": ["web"],
        "payload": {"user_id": 9, "plan": None, "items": [{"sku": "A-1", "price": 9.5}]}})
    assert not answer.startswith("Error"), answer
    assert server.last().body == (
        b'{"event":{"name":"purchase","payload":{"items":[{"price":9.5,"sku":"A-1"}],'
        b'"plan":null,"user_id":9},"tags":["web"]},"source":"capc"}')


async def test_a_bad_price_id_is_refused_by_field_path(
        tmp_path: Path, server: RecordingServer) -> None:
    answer = await call(tmp_path, server, "create_checkout",
                        {"line_items": [{"price": "nope"}]})
    assert answer.startswith("Error") and "line_items[0].price:" in answer
    assert server.received == []
