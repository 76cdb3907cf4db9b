"""Paths, media types and bodies on the wire (issue 35, items 5, 6 and 8's non-object
bodies), on one focused document: each operation is imported, compiled under --strict
(on the document's own https server) and, moved to a loopback server, called; the exact
request line, Content-Type and body bytes received are checked, and openapi-core (an
independent validator) finds each request valid for the original document."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.authoring.openapi.corpus import json_readers, on_server, werkzeug_request
from tests.authoring.openapi.helpers import generated, imported, write
from tests.support.loopback import LoopbackServer, start_server, stop_server

OK = {"200": {"description": "ok"}}
LONG = "the_identifier_of_the_very_long_named_resource_the_document_writes_in_full_here"
ARRAY = {"type": "array", "items": {"type": "integer"}}
THING = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _body(media: str, schema: dict[str, Any] | None, required: bool = True) -> dict[str, Any]:
    content: dict[str, Any] = {media: {"schema": schema} if schema is not None else {}}
    return {"requestBody": {"required": required, "content": content}}


def _op(operation_id: str, **extra: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "responses": OK, **extra}


def _query(name: str) -> dict[str, Any]:
    return {"parameters": [{"name": name, "in": "query", "required": True,
                            "schema": {"type": "string"}}]}


def _id(name: str = "id") -> list[dict[str, Any]]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}]


PATHS: dict[str, Any] = {
    "/items#byId": {"get": _op("itemsById", **_query("id"))},
    "/items#byName": {"get": _op("itemsByName", **_query("name"))},
    "/v1/a$b/@me/x:y!z'(1)*+,;=/{id}": {"get": _op("pchars", parameters=_id())},
    "/cost${id}": {"get": _op("dollarSlot", parameters=_id())},
    "/res/{" + LONG + "}": {"get": _op("longSlot", parameters=_id(LONG))},
    "/charset": {"post": _op("charset", **_body("application/json; charset=utf-8", THING))},
    "/capital": {"post": _op("capital", **_body("Application/JSON", THING))},
    "/vendor": {"patch": _op("vendor", **_body("application/vnd.github+json", THING))},
    "/merge": {"patch": _op("merge", **_body("application/merge-patch+json", THING))},
    "/problem": {"post": _op("problem", **_body("application/problem+json", THING))},
    "/any": {"post": _op("anyType", **_body("*/*", THING))},
    "/text": {"post": _op("text", **_body("text/plain", {"type": "string"}))},
    "/octets": {"put": _op("octets", **_body("application/octet-stream",
                                              {"type": "string", "format": "binary"}))},
    "/array": {"post": _op("array", **_body("application/json", ARRAY))},
    "/string": {"post": _op("jsonString", **_body("application/json", {"type": "string"}))},
    "/number": {"post": _op("number", **_body("application/json", {"type": "number"}))},
    "/free": {"patch": _op("free", **_body("application/merge-patch+json", {"type": "object"}))},
    "/none": {"post": _op("noSchema", **_body("application/json", None, required=False))},
}
DOCUMENT = {"openapi": "3.0.3", "info": {"title": "Wire", "version": "1"},
            "servers": [{"url": "https://api.example.com"}], "paths": PATHS}

# code → (arguments, path received, Content-Type received, body bytes received)
CASES: dict[str, tuple[dict[str, Any], str, str | None, bytes]] = {
    "items_by_id": ({"id": "7"}, "/items?id=7", None, b""),
    "items_by_name": ({"name": "n"}, "/items?name=n", None, b""),
    "pchars": ({"id": "7"}, "/v1/a$b/@me/x:y!z'(1)*+,;=/7", None, b""),
    "dollar_slot": ({"id": "7"}, "/cost%247", None, b""),
    "charset": ({"name": "é"}, "/charset", "application/json; charset=utf-8",
                '{"name":"é"}'.encode()),
    "capital": ({"name": "a"}, "/capital", "Application/JSON", b'{"name":"a"}'),
    "vendor": ({"name": "a"}, "/vendor", "application/vnd.github+json", b'{"name":"a"}'),
    "merge": ({"name": "a"}, "/merge", "application/merge-patch+json", b'{"name":"a"}'),
    "problem": ({"name": "a"}, "/problem", "application/problem+json", b'{"name":"a"}'),
    "any_type": ({"name": "a"}, "/any", "application/json", b'{"name":"a"}'),
    "text": ({"body": "line one\n{x}"}, "/text", "text/plain", b"line one\n{x}"),
    "octets": ({"body": "raw"}, "/octets", "application/octet-stream", b"raw"),
    "array": ({"body": [3, 1]}, "/array", "application/json", b"[3,1]"),
    "json_string": ({"body": 'say "hi"'}, "/string", "application/json", b'"say \\"hi\\""'),
    "number": ({"body": 2.5}, "/number", "application/json", b"2.5"),
    "free": ({"body": {"spec": "x"}}, "/free", "application/merge-patch+json",
             b'{"spec":"x"}'),
    "no_schema": ({}, "/none", "application/json", b""),
}


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    server = start_server(b"")
    yield server
    stop_server(server)


def _validator_document(base: str, path: str) -> dict[str, Any]:
    """The document on the loopback server, with ``path`` alone under its fragment-free
    name (openapi-core matches URLs, which carry no fragment)."""
    moved = on_server(copy.deepcopy(DOCUMENT), base)
    moved["paths"] = {path.partition("#")[0]: DOCUMENT["paths"][path]}
    return moved


def _manifest(tmp_path: Path, server: str | None) -> tuple[Path, dict[str, Any], Any]:
    spec = write(tmp_path, DOCUMENT, "wire.json")
    out = tmp_path / "out"
    outcome = imported(spec, out, server=server, allow_private_networks=server is not None)
    assert outcome.exit_code == 0, [str(d) for d in outcome.diagnostics]
    result = build([str(out)], options=CompileOptions(
        strict=server is None, allow_private_networks=server is not None),
        cwd=tmp_path, use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    assert server is not None or not result.diagnostics, [str(d) for d in result.diagnostics]
    path = tmp_path / "manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    return path, result.manifest, outcome


def test_every_operation_imports_strict_clean_with_its_notes(tmp_path: Path) -> None:
    _, manifest, outcome = _manifest(tmp_path / "strict", None)
    codes = {capability["code"] for capability in manifest["capabilities"]}
    assert codes == {*CASES, "long_slot"}, outcome.lines
    out = tmp_path / "strict" / "out"
    by_id = (out / "items_by_id.yaml").read_text()
    assert "fragment '#byId' dropped" in by_id and "'/items#byName'" in by_id
    assert generated(out, "array")["options"]["body_template"] == "{body}"
    assert generated(out, "array")["options"]["body_params"]["body"]["items"] == {
        "type": "integer"}


async def test_each_request_is_sent_as_the_document_says_and_is_valid(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    from openapi_core import Config, OpenAPI

    base = loopback.url("/base")
    path, manifest, _ = _manifest(tmp_path, base)
    loaded = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    by_code = {capability["code"]: capability for capability in manifest["capabilities"]}
    slot = next(iter(by_code["long_slot"]["api"]["arguments"]))
    assert len(slot) <= 64 and slot != LONG
    cases = {**CASES, "long_slot": ({slot: "r-1"}, "/res/r-1", None, b"")}
    context = RuntimeContext(user_id=1, settings=StaticSettings({}))
    async with loaded:
        for code, (arguments, sent_path, content_type, body) in cases.items():
            (tool,) = (await loaded.resolve([code], context)).tools
            before = len(loopback.requests)
            await tool.ainvoke(arguments)
            (received,) = loopback.requests[before:]
            assert received.path == "/base" + sent_path, code
            assert received.headers.get("Content-Type") == content_type, code
            assert received.body == body, code
            written = _document_path(by_code[code])
            spec = OpenAPI.from_dict(_validator_document(base, written), config=Config(
                spec_validator_cls=None, extra_media_type_deserializers=json_readers(DOCUMENT)))
            spec.validate_request(werkzeug_request(
                received.method, loopback.url(received.path), received.headers, received.body))


def _document_path(capability: dict[str, Any]) -> str:
    """The document path an imported capability came from (its origin's JSON pointer)."""
    pointer = capability["origin"]["openapi"]["operation"]
    _, _, escaped, _ = pointer.split("/")
    return str(escaped.replace("~1", "/").replace("~0", "~"))

