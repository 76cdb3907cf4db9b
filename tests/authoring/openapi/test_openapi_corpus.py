"""Real documents: the import compiles under --strict, every tool's schema is one both
providers' SDK types accept, and the request each tool sends is valid for the original
document, as an independent validator (openapi-core) reads it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.authoring.openapi.corpus import (
    ANTHROPIC_TOOL,
    CORPUS,
    OPENAI_TOOL,
    CorpusDocument,
    Unsampled,
    example,
    json_readers,
    load_document,
    on_server,
    tool_dicts,
    werkzeug_request,
)
from tests.authoring.openapi.helpers import hermetic, messages
from tests.support.loopback import LoopbackServer, start_server, stop_server

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import  # isort: skip


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    server = start_server(b"")
    yield server
    stop_server(server)


def import_and_compile(document: CorpusDocument, folder: Path, server: str | None = None
                       ) -> tuple[Path, dict[str, Any]]:
    out = folder / "capabilities" / document.name
    outcome = run_import(OpenApiRequest(
        spec=str(document.path), output_dir=str(out), selectors=document.selectors,
        take_all=not document.selectors, server=server or document.server,
        **hermetic(folder / "capabilities", allow_private_networks=server is not None)))
    assert outcome.exit_code == 0, messages(outcome)
    # On the loopback server (plain http, a private address) the warnings say so; on the
    # document's own servers there must be none at all.
    result = build([str(out)], options=CompileOptions(
        strict=server is None, allow_private_networks=server is not None), cwd=folder,
        use_cache=False)
    assert result.manifest is not None, "\n".join(map(str, result.diagnostics[:20]))
    assert server is not None or not result.diagnostics
    path = folder / "manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    return path, result.manifest


@pytest.mark.parametrize("document", CORPUS, ids=lambda d: d.name)
async def test_real_documents_compile_and_fit_both_providers(
        document: CorpusDocument, tmp_path: Path) -> None:
    await check_tools_fit_both_providers(document, tmp_path)


async def check_tools_fit_both_providers(document: CorpusDocument, tmp_path: Path) -> None:
    """Import, compile under --strict, resolve every tool, validate both providers' dicts."""
    path, manifest = import_and_compile(document, tmp_path)
    codes = [c["code"] for c in manifest["capabilities"]]
    assert len(codes) >= 20
    loaded = load_manifest(path, registry=ToolRegistry())
    context = RuntimeContext(user_id=1, settings=StaticSettings(_settings(manifest)))
    async with loaded:
        toolset = await loaded.resolve(codes, context)
        uploads = {c["code"] for c in manifest["capabilities"] if _uploads(c)}
        # Upload tools need a chat to take documents from; this context has none.
        assert {skipped.code for skipped in toolset.skipped} == uploads
        assert len(toolset.tools) == len(codes) - len(uploads)
        for tool in toolset.tools:
            openai_tool, anthropic_tool = tool_dicts(tool)
            OPENAI_TOOL.validate_python(openai_tool)
            ANTHROPIC_TOOL.validate_python(anthropic_tool)
            Draft202012Validator.check_schema(anthropic_tool["input_schema"])


def _uploads(capability: dict[str, Any]) -> bool:
    return any("file" in argument["bindings"]
               for argument in capability["api"]["arguments"].values())


def _settings(manifest: dict[str, Any]) -> dict[str, str]:
    names = {name for c in manifest["capabilities"]
             for name in c.get("api", {}).get("placeholders", [])}
    return {name: f"value-for-{name.lower()}-5f4e3d2c" for name in names}


@pytest.mark.parametrize("document", CORPUS, ids=lambda d: d.name)
async def test_each_request_a_tool_sends_is_valid_for_the_document(
        document: CorpusDocument, tmp_path: Path, loopback: LoopbackServer) -> None:
    await check_requests_valid(document, load_document(document.path), tmp_path, loopback)


async def check_requests_valid(document: CorpusDocument, original: dict[str, Any],
                               tmp_path: Path, loopback: LoopbackServer) -> None:
    """Every tool (with sample arguments) sends a request openapi-core finds valid for
    ``original`` (the document as OpenAPI 3)."""
    from openapi_core import Config, OpenAPI

    base = loopback.url("/base")
    path, manifest = import_and_compile(document, tmp_path, server=base)
    # The documents break the specification in places (Anthropic's has no info.version):
    # the requests are validated, not the documents.
    spec = OpenAPI.from_dict(on_server(original, base), config=Config(
        spec_validator_cls=None, extra_media_type_deserializers=json_readers(original)))
    loaded = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    context = RuntimeContext(user_id=1, settings=StaticSettings(_settings(manifest)))
    checked, unsampled = 0, 0
    invalid: list[str] = []
    ambiguous: list[str] = []
    async with loaded:
        for capability in manifest["capabilities"]:
            schema = capability["tool"]["input_schema"]
            if _uploads(capability):
                unsampled += 1  # uploads carry chat documents, not sample values
                continue
            try:
                arguments = example(schema)
            except Unsampled:
                unsampled += 1
                continue
            (tool,) = (await loaded.resolve([capability["code"]], context)).tools
            before = len(loopback.requests)
            await tool.ainvoke(arguments)
            (sent,) = loopback.requests[before:]
            request = werkzeug_request(sent.method, loopback.url(sent.path), sent.headers,
                                       sent.body)
            try:
                spec.validate_request(request)
            except Exception as error:  # the validator's verdict, recorded per tool
                verdict = f"{error} ({getattr(error, '__cause__', '')})"
                # A value two of the document's own oneOf alternatives accept (GitHub's
                # labels: {} fits both object forms) is the document's ambiguity.
                (ambiguous if "is valid under each of" in verdict else invalid).append(
                    f"{capability['code']}: {type(error).__name__}: {verdict}")
            checked += 1
    assert not invalid, "\n".join(invalid[:10])
    assert len(ambiguous) <= max(2, 0.05 * checked), "\n".join(ambiguous[:10])
    assert checked >= 0.8 * (checked + unsampled), (checked, unsampled)


def test_check_between_two_real_versions_of_one_api(tmp_path: Path) -> None:
    """Azure OpenAI's stable and preview documents: the drift a team would see."""
    from tests.authoring.openapi.corpus import UPSTREAM

    spec = tmp_path / "azure.json"
    spec.write_bytes((UPSTREAM / "openai/azure/openapi.json").read_bytes())
    out = tmp_path / "capabilities" / "azure"
    request = OpenApiRequest(spec=str(spec), output_dir=str(out), take_all=True,
                             **hermetic(tmp_path / "capabilities"))
    written = run_import(request)
    assert written.exit_code == 0, messages(written)
    assert len(written.written) == 6
    assert any("AZURE_OPEN_AI_SERVICE_API_API_VERSION" in line for line in written.lines)
    unchanged = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                          **hermetic(out)))
    assert unchanged.exit_code == 0, unchanged.lines
    spec.write_bytes((UPSTREAM / "openai/azure-preview/openapi.json").read_bytes())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    drift = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                      **hermetic(out)))
    assert drift.exit_code == 1
    security = [line for line in drift.lines if line.startswith("SECURITY ")]
    assert security and list(drift.lines[: len(security)]) == security
    # A new optional argument lets the model send more: capc diff's ranking, which --check
    # shares (one ranking, issue 30 item 2).
    assert "SECURITY chat_completions_create: new argument body.stream_options" in security
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_check_with_nothing_generated_is_an_error(tmp_path: Path) -> None:
    from tests.authoring.openapi.corpus import UPSTREAM

    outcome = run_import(OpenApiRequest(spec=str(UPSTREAM / "openai/azure/openapi.json"),
                                        output_dir=str(tmp_path / "none"), check=True))
    assert outcome.exit_code == 1
    assert "openapi-check-empty" in messages(outcome)
