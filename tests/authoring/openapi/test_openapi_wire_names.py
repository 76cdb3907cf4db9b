"""Names that are not identifiers and header parameters, on real documents (SPEC §11).

Anthropic's document has header parameters (``anthropic-beta``, ``Anthropic-Worker-ID``)
and bracketed query names (``created_at[gte]``, ``statuses[]``), Cohere's an
``X-Client-Name`` header. Each becomes an argument the model can
name, sent under the document's exact name; every such tool is called with those
arguments filled and the request is checked by an independent validator (openapi-core)
against the original document, and for the names on the wire.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from tests.authoring.openapi.corpus import (
    CORPUS,
    CorpusDocument,
    Unsampled,
    example,
    load_document,
    on_server,
    werkzeug_request,
)
from tests.authoring.openapi.test_openapi_corpus import (
    _settings,
    import_and_compile,
    loopback,  # noqa: F401  (the module's loopback server fixture)
)
from tests.support.loopback import LoopbackServer

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest  # isort: skip

DOCUMENTS = {document.name: document for document in CORPUS}
# Per document: the fewest tools with such an argument (the documents' counts, rounded down).
AT_LEAST = {"anthropic": 60, "cohere": 30}


def _wired(capability: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: argument for name, argument in capability["api"]["arguments"].items()
            if "wire" in argument or "header" in argument["bindings"]}


def _call_arguments(capability: dict[str, Any], wired: dict[str, Any]) -> dict[str, Any]:
    schema = capability["tool"]["input_schema"]
    arguments = example(schema)
    for name in wired:
        arguments.setdefault(name, example(schema["properties"][name]))
    return arguments


@pytest.mark.parametrize("name", sorted(AT_LEAST))
async def test_wire_names_and_header_arguments_reach_the_server_and_are_valid(
        name: str, tmp_path: Path, loopback: LoopbackServer) -> None:  # noqa: F811
    from openapi_core import Config, OpenAPI

    document: CorpusDocument = DOCUMENTS[name]
    base = loopback.url("/base")
    path, manifest = import_and_compile(document, tmp_path, server=base)
    spec = OpenAPI.from_dict(on_server(load_document(document.path), base),
                             config=Config(spec_validator_cls=None))
    loaded = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    context = RuntimeContext(user_id=1, settings=StaticSettings(_settings(manifest)))
    checked = 0
    invalid: list[str] = []
    async with loaded:
        for capability in manifest["capabilities"]:
            wired = _wired(capability)
            arguments_of = capability["api"]["arguments"].values()
            if not wired or any("file" in a["bindings"] for a in arguments_of):
                continue  # uploads carry chat documents, not sample values
            try:
                arguments = _call_arguments(capability, wired)
            except Unsampled:
                continue
            (tool,) = (await loaded.resolve([capability["code"]], context)).tools
            before = len(loopback.requests)
            await tool.ainvoke(arguments)
            (received,) = loopback.requests[before:]
            query = dict(parse_qsl(received.path.partition("?")[2]))
            headers = {key.lower() for key in received.headers}
            for argument_name, argument in wired.items():
                wire = argument.get("wire", argument_name)
                where = headers if "header" in argument["bindings"] else \
                    set(query) if "query" in argument["bindings"] else None
                if where is not None:
                    assert (wire.lower() if where is headers else wire) in where, \
                        (capability["code"], wire, received.path)
            request = werkzeug_request(received.method, loopback.url(received.path),
                                       received.headers, received.body)
            try:
                spec.validate_request(request)
            except Exception as error:  # the validator's verdict, recorded per tool
                invalid.append(f"{capability['code']}: {error} ({error.__cause__})")
            checked += 1
    assert not invalid, "\n".join(invalid[:10])
    assert checked >= AT_LEAST[name], checked
