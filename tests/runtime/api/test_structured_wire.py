"""Arrays and objects on the wire (SPEC §10): location x type x style, exact bytes.

Each tool is compiled from YAML by the real pipeline, loaded by the runtime and called
against a recording server on 127.0.0.1; the assertions are on the query string and the
body bytes exactly as the server read them off the socket. Declared fields go out in name
order (the manifest's canonical form sorts keys); a map's keys in the order the model sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.runtime import RecordingServer, recording_server
from tests.support.structured import call_tool, manifest_file

TOOLS = """\
apiVersion: capc/v1
kind: Capability
code: search
name: Search
type: api
options:
  description: Search issues
  url: BASE/repos/{repo}/issues
  params:
    q: {type: string}
    labels: {type: array, items: {type: string}}
    comma_labels: {type: array, items: {type: string}, style: comma}
    bracket_labels: {type: array, items: {type: string}, style: brackets}
    ids: {type: array, items: {type: integer}, style: comma}
    flags: {type: array, items: {type: boolean}}
    filter:
      type: object
      style: deep_object
      properties:
        state: {type: string, enum: [open, closed], required: true}
        since: {type: string, format: date-time}
        author: {type: object, properties: {login: {type: string}}}
    sort:
      type: object
      style: json
      properties:
        field: {type: string, required: true}
        descending: {type: boolean, default: false}
    tags:
      type: object
      style: deep_object
      additional_properties: {type: string}
---
apiVersion: capc/v1
kind: Capability
code: checkout_json
name: Checkout JSON
type: api
options:
  description: Create a checkout (JSON)
  method: POST
  url: BASE/v1/checkout
  body:
    items:
      type: array
      required: true
      items:
        type: object
        properties:
          price: {type: string, required: true}
          quantity: {type: integer, minimum: 1, default: 1}
          note: {type: string, nullable: true}
          gift: {type: boolean}
    metadata: {type: object, additional_properties: {type: string}}
    coupon: {type: string, nullable: true}
    memo: {type: string}
---
apiVersion: capc/v1
kind: Capability
code: checkout_form
name: Checkout Form
type: api
options:
  description: Create a checkout (form)
  method: POST
  url: BASE/v1/checkout
  headers:
    Content-Type: application/x-www-form-urlencoded
  body:
    mode: {type: string, required: true}
    line_items:
      type: array
      items:
        type: object
        properties:
          price: {type: string, required: true}
          quantity: {type: integer, default: 1}
    expand: {type: array, items: {type: string}}
    metadata: {type: object, additional_properties: {type: string}}
    shipping:
      type: object
      properties:
        address: {type: object, properties: {city: {type: string}, line: {type: string}}}
---
apiVersion: capc/v1
kind: Capability
code: event
name: Event
type: api
options:
  description: Record an event
  method: POST
  url: BASE/v1/events
  body_template:
    event: {kind: "{kind}", payload: "{payload}", tags: "{tags}", label: "kind {kind}"}
  body_params:
    kind: {type: string, required: true}
    payload:
      type: object
      required: true
      properties:
        user: {type: object, properties: {id: {type: integer, required: true}}}
    tags: {type: array, items: {type: string}}
"""


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running


@pytest.fixture
def manifest(tmp_path: Path, server: RecordingServer) -> Path:
    return manifest_file(tmp_path, TOOLS, server.base_url)


async def query(manifest: Path, server: RecordingServer, arguments: dict[str, Any]) -> str:
    answer = await call_tool(manifest, "search", {"repo": "o/r", **arguments})
    assert not answer.startswith("Error"), answer
    return server.last().query


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"q": "a b&c=d#e"}, "q=a+b%26c%3Dd%23e"),
    ({"labels": ["bug", "docs"]}, "labels=bug&labels=docs"),
    ({"comma_labels": ["bug", "a,b"]}, "comma_labels=bug,a%2Cb"),
    ({"bracket_labels": ["bug", "x]&y=1"]}, "bracket_labels[]=bug&bracket_labels[]=x%5D%26y%3D1"),
    ({"ids": [1, 22, 333]}, "ids=1,22,333"),
    ({"flags": [True, False]}, "flags=true&flags=false"),
    ({"labels": []}, ""),
    ({"filter": {"state": "open", "since": "2024-01-02T03:04:05Z"}},
     "filter[since]=2024-01-02T03%3A04%3A05Z&filter[state]=open"),
    ({"filter": {"state": "open", "author": {"login": "a&b"}}},
     "filter[author][login]=a%26b&filter[state]=open"),
    ({"sort": {"field": "created"}},
     "sort=%7B%22descending%22%3Afalse%2C%22field%22%3A%22created%22%7D"),
    ({"tags": {"a&b=c": "x y", "k%": "1\n#"}}, "tags[a%26b%3Dc]=x+y&tags[k%25]=1%0A%23"),
    ({"q": "x", "labels": ["a"], "filter": {"state": "closed"}},
     "filter[state]=closed&labels=a&q=x"),
])
async def test_query_arrays_and_objects_are_encoded_in_their_style(
        manifest: Path, server: RecordingServer, arguments: dict[str, Any], expected: str
) -> None:
    assert await query(manifest, server, arguments) == expected
    assert server.last().path == "/repos/o%2Fr/issues"


@pytest.mark.parametrize("key", ["a[b", "a]b", "[", "x][y"])
async def test_a_map_key_with_a_bracket_is_refused_before_any_request(
        manifest: Path, server: RecordingServer, key: str) -> None:
    answer = await call_tool(manifest, "search", {"repo": "r", "tags": {key: "v"}})
    assert answer.startswith("Error") and "bracket" in answer
    assert server.received == []


async def test_a_nested_json_body_is_sent_as_is_with_defaults_and_nulls_per_spec(
        manifest: Path, server: RecordingServer) -> None:
    answer = await call_tool(manifest, "checkout_json", {
        "items": [{"price": "p_1", "quantity": 2, "note": None, "gift": None},
                  {"price": "p_2"}],
        "metadata": {"plan": "pro", "a\"b": "c\n"},
        "coupon": None,
        "memo": None,
    })
    assert not answer.startswith("Error"), answer
    request = server.last()
    assert request.header("Content-Type") == "application/json"
    # note: nullable, so null is sent; gift and memo: not nullable, so null is "not sent";
    # quantity's default is filled in where it was left out.
    assert request.body == (
        b'{"coupon":null,"items":[{"note":null,"price":"p_1","quantity":2},'
        b'{"price":"p_2","quantity":1}],"metadata":{"plan":"pro","a\\"b":"c\\n"}}')


async def test_optional_fields_left_out_are_not_sent(
        manifest: Path, server: RecordingServer) -> None:
    await call_tool(manifest, "checkout_json", {"items": [{"price": "p"}]})
    assert json.loads(server.last().body) == {"items": [{"price": "p", "quantity": 1}]}


async def test_a_form_body_nests_with_brackets(manifest: Path, server: RecordingServer) -> None:
    answer = await call_tool(manifest, "checkout_form", {
        "mode": "payment",
        "line_items": [{"price": "p_1", "quantity": 2}, {"price": "p 2"}],
        "expand": ["customer", "line_items"],
        "metadata": {"plan": "pro", "k&=": "%"},
        "shipping": {"address": {"city": "Zürich"}},
    })
    assert not answer.startswith("Error"), answer
    assert server.last().body == (
        b"expand[0]=customer&expand[1]=line_items"
        b"&line_items[0][price]=p_1&line_items[0][quantity]=2"
        b"&line_items[1][price]=p+2&line_items[1][quantity]=1"
        b"&metadata[plan]=pro&metadata[k%26%3D]=%25&mode=payment"
        b"&shipping[address][city]=Z%C3%BCrich")


async def test_template_leaves_keep_native_arrays_and_objects(
        manifest: Path, server: RecordingServer) -> None:
    answer = await call_tool(manifest, "event", {
        "kind": "signup", "payload": {"user": {"id": 7}}, "tags": ["a", "b"]})
    assert not answer.startswith("Error"), answer
    assert json.loads(server.last().body) == {"event": {
        "kind": "signup", "payload": {"user": {"id": 7}}, "tags": ["a", "b"],
        "label": "kind signup"}}


@pytest.mark.parametrize(("code", "arguments", "path"), [
    ("checkout_json", {"items": [{"price": "p", "quantity": 0}]}, "items[0].quantity"),
    ("checkout_json", {"items": [{"price": 3}]}, "items[0].price"),
    ("checkout_json", {"items": [{"price": "p", "extra": 1}]}, "items[0].extra"),
    ("checkout_json", {"items": [], "metadata": {"a": 1}}, "metadata.a"),
    ("search", {"repo": "r", "filter": {"state": "merged"}}, "filter.state"),
    ("search", {"repo": "r", "ids": [1, True]}, "ids[1]"),
    ("event", {"kind": "k", "payload": {"user": {}}}, "payload.user.id"),
])
async def test_bad_nested_arguments_are_refused_by_field_path_before_any_request(
        manifest: Path, server: RecordingServer, code: str, arguments: dict[str, Any],
        path: str) -> None:
    answer = await call_tool(manifest, code, arguments)
    assert answer.startswith("Error") and f"{path}:" in answer, answer
    assert "Traceback" not in answer
    assert server.received == []
