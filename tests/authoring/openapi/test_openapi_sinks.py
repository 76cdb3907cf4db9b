"""A document never chooses what a tool sends (issue 30, item 1), tested as a class.

Every place where document text can reach a value capc interpolates (the URL, header
names and values, query names) is fed ``${OPENAI_API_KEY}`` in several spellings. Each
import either refuses (located), skips the operation with its reason, or writes tools
that resolve only the settings the import listed; then a real loopback server receives
every tool's request and the secret's value never arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.authoring.openapi.naming import argument_name
from compiler.authoring.openapi.sinks import interpolated_settings
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.authoring.openapi.helpers import generated, imported, write
from tests.support.runtime import RecordingServer, recording_server

SECRET = "sk-the-document-must-never-get-this-0123456789"
SPELLINGS = ("${OPENAI_API_KEY}", "$${OPENAI_API_KEY}", "${${OPENAI_API_KEY}}",
             "a${OPENAI_API_KEY}b", "${OPENAI_API_KEY")
OK = {"200": {"description": "ok"}}


def _document(base: str, operation: dict[str, Any] | None = None, *,
              server: dict[str, Any] | None = None, schemes: dict[str, Any] | None = None,
              path: str = "/things", title: str = "Sinks") -> dict[str, Any]:
    document: dict[str, Any] = {
        "openapi": "3.0.3", "info": {"title": title, "version": "1"},
        "servers": [server or {"url": base}],
        "paths": {path: {"get": {"operationId": "listThings", "responses": OK,
                                 **(operation or {})}}}}
    if schemes:
        document["components"] = {"securitySchemes": schemes}
        document["security"] = [{name: [] for name in schemes}]
    return document


def _parameter(name: str, where: str, schema: dict[str, Any], required: bool = True
               ) -> dict[str, Any]:
    return {"parameters": [{"name": name, "in": where, "required": required,
                            "schema": schema}]}


def _host(base: str) -> str:
    return base.removeprefix("http://").split(":")[0]


def _port(base: str) -> str:
    return base.rsplit(":", 1)[1]


# Each sink: (loopback base URL, hostile text) → a document putting the text there.
SINKS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "server url path": lambda base, text: _document(base, server={"url": f"{base}/v1{text}"}),
    "server variable in the path": lambda base, text: _document(base, server={
        "url": base + "/{version}", "variables": {"version": {"default": text}}}),
    "server variable in the host": lambda base, text: _document(base, server={
        "url": "http://{host}:" + _port(base),
        "variables": {"host": {"default": _host(base) + text}}}),
    "server variable in the port": lambda base, text: _document(base, server={
        "url": f"http://{_host(base)}:{{port}}", "variables": {"port": {"default": text}}}),
    "required query default": lambda base, text: _document(base, _parameter(
        "api-version", "query", {"type": "string", "default": text})),
    "required query enum": lambda base, text: _document(base, _parameter(
        "api-version", "query", {"type": "string", "enum": [text]})),
    "required query name": lambda base, text: _document(base, _parameter(
        f"v{text}", "query", {"type": "string", "default": "1"})),
    "optional query enum": lambda base, text: _document(base, _parameter(
        "mode", "query", {"type": "string", "enum": [text, "b"], "default": text}, False)),
    "required header default": lambda base, text: _document(base, _parameter(
        "X-Trace", "header", {"type": "string", "default": text})),
    "optional header default": lambda base, text: _document(base, _parameter(
        "X-Trace", "header", {"type": "string", "default": text}, False)),
    "required header enum": lambda base, text: _document(base, _parameter(
        "X-Trace", "header", {"type": "string", "enum": [text]})),
    "header name": lambda base, text: _document(base, _parameter(
        f"X-{text}-Id", "header", {"type": "string", "default": "1"})),
    "credential header name": lambda base, text: _document(base, _parameter(
        f"X-{text}-Token", "header", {"type": "string"})),
    "apiKey query name": lambda base, text: _document(base, schemes={
        "key": {"type": "apiKey", "in": "query", "name": f"k{text}"}}),
    "apiKey header name": lambda base, text: _document(base, schemes={
        "key": {"type": "apiKey", "in": "header", "name": f"X-{text}"}}),
    "apiKey cookie name": lambda base, text: _document(base, schemes={
        "key": {"type": "apiKey", "in": "cookie", "name": f"s{text}"}}),
    "security scheme name": lambda base, text: _document(base, schemes={
        text: {"type": "http", "scheme": "bearer"}}),
    "title (setting names)": lambda base, text: _document(base, schemes={
        "key": {"type": "apiKey", "in": "header", "name": "X-Key"}}, title=text),
    "path": lambda base, text: _document(base, path=f"/things/{text}"),
    "path with a query": lambda base, text: _document(base, path=f"/things?x={text}"),
    "operation id": lambda base, text: _document(base, {"operationId": text}),
    "body field name and default": lambda base, text: {
        **_document(base), "paths": {"/things": {"post": {
            "operationId": "makeThing", "responses": OK, "requestBody": {"content": {
                "application/json": {"schema": {"type": "object", "required": ["name"],
                                                "properties": {
                    "name": {"type": "string", "default": text, "enum": [text]},
                    text: {"type": "string"}}}}}}}}}},
    "description": lambda base, text: _document(base, {"description": text,
                                                       "summary": text}),
    "pipe-delimited query name and enum": lambda base, text: _document(base, {"parameters": [{
        "name": f"v{text}", "in": "query", "required": True, "style": "pipeDelimited",
        "schema": {"type": "array", "items": {"type": "string", "enum": [text, "b"]}}}]}),
    "space-delimited query default": lambda base, text: _document(base, {"parameters": [{
        "name": "words", "in": "query", "style": "spaceDelimited", "schema": {
            "type": "array", "items": {"type": "string"}, "default": [text, text]}}]}),
    "cookie parameter name and default": lambda base, text: _document(base, _parameter(
        f"c{text}", "cookie", {"type": "string", "default": text}, False)),
    "required cookie name and default": lambda base, text: _document(base, _parameter(
        f"c{text}", "cookie", {"type": "string", "default": text})),
    "required cookie default": lambda base, text: _document(base, _parameter(
        "lang", "cookie", {"type": "string", "default": text})),
    "credential cookie name": lambda base, text: _document(base, _parameter(
        f"s{text}_token", "cookie", {"type": "string"})),
    "operation server variable": lambda base, text: _document(base, {"servers": [{
        "url": base + "/{v}", "variables": {"v": {"default": text}}}]}),
    "path item server url": lambda base, text: {**_document(base), "paths": {"/things": {
        "servers": [{"url": f"{base}/p{text}"}],
        "get": {"operationId": "listThings", "responses": OK}}}},
    # A required name two locations share: the second is a location-qualified argument
    # sent under the document's name (Trello's path `{token}` and query `token`).
    "query name beside a path slot of the same name": lambda base, text: _document(base, {
        "parameters": [{"name": argument_name(f"v{text}"), "in": "path", "required": True,
                        "schema": {"type": "string"}},
                       {"name": f"v{text}", "in": "query", "required": True,
                        "schema": {"type": "string", "default": text}}]},
        path="/things/{" + argument_name(f"v{text}") + "}"),
    "body field beside a path slot of the same name": lambda base, text: {
        **_document(base), "paths": {"/things/{" + argument_name(text) + "}": {"post": {
            "operationId": "makeThing", "responses": OK,
            "parameters": [{"name": argument_name(text), "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "required": [text],
                "properties": {text: {"type": "string", "default": text}}}}}}}}}},
    "path item reference": lambda base, text: {
        **_document(base), "paths": {"/things": {"$ref": f"#/x-items/{text}"}},
        "x-items": {text: {"get": {"operationId": "listThings", "responses": OK}}}},
}


class RecordingSettings(StaticSettings):
    """The settings a tool asked for, whatever their values."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    async def get_user_setting_value(self, name: str, user_id: Any = None,
                                     group_id: Any = None) -> str | None:
        self.asked.add(name)
        return await super().get_user_setting_value(name, user_id, group_id)


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running


def listed_settings(lines: tuple[str, ...]) -> set[str]:
    """The names under "settings to create" in an import's summary."""
    names: set[str] = set()
    inside = False
    for line in lines:
        if line.startswith("settings to create"):
            inside = True
        elif inside and line.startswith("  "):
            names.add(line.split(":", 1)[0].strip())
        else:
            inside = False
    return names


def _argument(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    return {"integer": 1, "number": 1, "boolean": True, "array": [],
            "object": {}}.get(str(schema.get("type")), "a")


async def _call_every_tool(manifest_path: Path, codes: list[str],
                           settings: RecordingSettings) -> int:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(),
                             allow_private_networks=True)
    async with manifest:
        tools = (await manifest.resolve(codes, RuntimeContext(user_id=1,
                                                             settings=settings))).tools
        for tool in tools:
            parameters = convert_to_openai_tool(tool)["function"]["parameters"]
            arguments = {name: _argument(parameters["properties"][name])
                         for name in parameters.get("required", [])}
            await tool.ainvoke(arguments)
        return len(tools)


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("sink", sorted(SINKS))
def test_no_document_text_makes_a_tool_send_a_setting_it_did_not_list(
    tmp_path: Path, server: RecordingServer, sink: str, spelling: str
) -> None:
    spec = write(tmp_path, SINKS[sink](server.base_url, spelling), "api.json")
    out = tmp_path / "out"
    outcome = imported(spec, out, allow_private_networks=True)
    if outcome.exit_code:  # refused, located in the document; nothing written
        assert outcome.diagnostics and all(d.line >= 1 for d in outcome.diagnostics)
        assert not outcome.written
        return
    listed = listed_settings(outcome.lines)
    assert "OPENAI_API_KEY" not in listed
    for path in outcome.written:
        data = generated(out, Path(path).stem)
        # Every placeholder the file holds where capc interpolates is listed.
        assert set(interpolated_settings(data["options"])) <= listed, (sink, data["options"])
    result = build([str(out)], options=CompileOptions(allow_private_networks=True),
                   cwd=tmp_path, use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    manifest_path = tmp_path / "manifest.json"
    manifest_path.write_bytes(dump_manifest(result.manifest))
    settings = RecordingSettings({**{name: f"value-of-{name}" for name in listed},
                                  "OPENAI_API_KEY": SECRET})
    before = len(server.received)
    called = asyncio.run(_call_every_tool(manifest_path,
                                             [Path(p).stem for p in outcome.written],
                                             settings))
    assert called == len(outcome.written)
    assert settings.asked <= listed, (sink, settings.asked)
    arrived = server.received[before:]
    assert len(arrived) == called
    for request in arrived:
        wire = f"{request.raw_path}\n{request.headers}\n{request.body!r}"
        assert SECRET not in wire, (sink, wire)
