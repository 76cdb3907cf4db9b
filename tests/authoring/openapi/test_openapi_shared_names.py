"""One name in two locations (issue 35, skip classes): Trello's path ``{token}`` and required
query ``token`` (10 operations), SendGrid's ``list_id``/``segment_id`` path and query (4),
Telnyx's ``call_control_id`` path and body field (1). These operations were skipped; now
the second, required use is a location-qualified argument (``query_token``,
``body_call_control_id``) sent under the document's exact name (the wire-name mapping
non-identifier names use). An optional second use is still left out with a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.authoring.openapi.corpus import on_server, werkzeug_request
from tests.authoring.openapi.directory_corpus import directory_document
from tests.authoring.openapi.helpers import document, generated, imported, messages, write
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer, RecordedRequest

OK = {"200": {"description": "ok"}}


def _valid_for(spec: Path, base: str, sent: RecordedRequest, loopback: LoopbackServer) -> None:
    from openapi_core import Config, OpenAPI

    data = on_server(json.loads(spec.read_text(encoding="utf-8")), base)
    OpenAPI.from_dict(data, config=Config(spec_validator_cls=None)).validate_request(
        werkzeug_request(sent.method, loopback.url(sent.path), sent.headers, sent.body))


async def test_trellos_token_in_the_path_and_the_query(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_document("trello")
    out = tmp_path / "out"
    base = loopback.url("/1")
    outcome = imported(spec, out, "getTokensByToken", server=base,
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    options = generated(out, "get_tokens_by_token")["options"]
    assert options["params"]["query_token"]["wire_name"] == "token"
    assert options["path_params"]["token"]["required"] is True
    assert "key" not in options["params"]  # the API key scheme's: sent from the setting
    (sent,) = await received(out, loopback, [("get_tokens_by_token", {
        "token": "inspected", "query_token": "mine&x"})],
        settings={"TRELLO_API_KEY": "k"})
    path, _, query = sent.path.partition("?")
    assert path == "/1/tokens/inspected"
    assert "token=mine%26x" in query.split("&"), query
    assert [part for part in query.split("&") if part.startswith("key=")] == ["key=k"]
    _valid_for(spec, base, sent, loopback)


async def test_sendgrids_segment_id_in_the_path_and_the_query(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_document("sendgrid")
    out = tmp_path / "out"
    outcome = imported(spec, out, "GET /contactdb/segments/{segment_id}",
                       server=loopback.url("/v3"), allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    (code,) = [p.stem for p in out.iterdir()]
    params = generated(out, code)["options"]["params"]
    assert params["query_segment_id"]["wire_name"] == "segment_id"
    arguments: dict[str, Any] = {"segment_id": "s1", "query_segment_id": 7}
    (sent,) = await received(out, loopback, [(code, arguments)],
                             settings={"EMAIL_ACTIVITY_BETA_AUTHORIZATION": "t"})
    assert sent.path == "/v3/contactdb/segments/s1?segment_id=7", sent.path


async def test_telnyxs_call_control_id_in_the_path_and_the_body(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_document("telnyx")
    out = tmp_path / "out"
    base = loopback.url("/v2")
    outcome = imported(spec, out, "callBridge", server=base, allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    body = generated(out, "call_bridge")["options"]["body"]
    assert body["body_call_control_id"]["wire_name"] == "call_control_id"
    (sent,) = await received(out, loopback, [("call_bridge", {
        "call_control_id": "leg-a", "body_call_control_id": "leg-b"})],
        settings={"TELNYX_API_BEARER_AUTH": "t"})
    assert sent.path == "/v2/calls/leg-a/actions/bridge"
    assert json.loads(sent.body) == {"call_control_id": "leg-b"}
    _valid_for(spec, base, sent, loopback)


async def test_a_shared_name_is_qualified_by_location_or_left_out_when_optional(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    parameters = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                  {"name": "id", "in": "query", "required": True,
                   "schema": {"type": "integer"}},
                  {"name": "id", "in": "header", "required": False,
                   "schema": {"type": "string"}}]
    data = document({"/things/{id}": {"post": {
        "operationId": "moveThing", "parameters": parameters, "responses": OK,
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "required": ["id"], "properties": {"id": {"type": "boolean"}}}}}}}}})
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, server=loopback.url("/api"),
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    options = generated(out, "move_thing")["options"]
    assert options["params"] == {"query_id": {"type": "integer", "wire_name": "id",
                                              "required": True}}
    assert options["body"]["body_id"]["wire_name"] == "id"
    assert "headers" not in options or "id" not in str(options.get("header_params"))
    text = (out / "move_thing.yaml").read_text(encoding="utf-8")
    assert "query parameter 'id' is the argument 'query_id'" in text
    assert "optional header parameter 'id' left out" in text
    (sent,) = await received(out, loopback, [("move_thing", {
        "id": "a/b", "query_id": 3, "body_id": True})])
    assert sent.path == "/api/things/a%2Fb?id=3"
    assert json.loads(sent.body) == {"id": True}


def test_a_qualified_name_already_taken_still_skips_the_operation(tmp_path: Path) -> None:
    parameters = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                  {"name": "query_id", "in": "query", "required": True,
                   "schema": {"type": "string"}},
                  {"name": "id", "in": "query", "required": True, "schema": {"type": "string"}}]
    data = document({"/things/{id}": {"get": {"operationId": "getThing",
                                               "parameters": parameters, "responses": OK}}})
    outcome = imported(write(tmp_path, data), tmp_path / "out")
    assert any(line.startswith("0 tools written, 1 operations skipped")
               for line in outcome.lines), outcome.lines
    assert "argument 'query_id' is both a query and a query parameter" in messages(outcome)
