"""api tools against a real server on 127.0.0.1: encoding, settings, refusals, errors."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.runtime import RuntimeContext, StaticSettings, ToolOverride, ToolRegistry
from compiler.runtime import load_manifest as _load
from tests.support.runtime import (
    Document,
    DocumentStore,
    RecordingServer,
    api_capability,
    write_manifest,
)

SECRET = "s3cr3t-token-value"


def load(path: Path) -> Any:
    return _load(path, registry=ToolRegistry(), allow_private_networks=True)


def context(**extra: Any) -> RuntimeContext:
    settings = StaticSettings({"TOKEN": SECRET, **extra.pop("settings", {})})
    return RuntimeContext(user_id=1, group_id=2, chat_id=extra.pop("chat_id", 42),
                          settings=settings, **extra)


def search_api(url: str, **options: Any) -> dict[str, Any]:
    return api_capability(
        "search", url,
        properties={
            "q": {"type": "string", "description": "Search text", "minLength": 1},
            "kind": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "exact": {"type": "boolean", "description": "Exact match"},
        },
        arguments={"q": {"bindings": ["query"], "type": "string"},
                   "kind": {"bindings": ["query"], "type": "string"},
                   "limit": {"bindings": ["query"], "type": "integer"},
                   "exact": {"bindings": ["query"], "type": "boolean"}},
        required=["q"],
        headers={"Authorization": "Bearer ${TOKEN}"}, placeholders=["TOKEN"],
        description="Search things", **options,
    )


async def one_tool(path: Path, ctx: RuntimeContext | None = None, **resolve: Any) -> Any:
    manifest = load(path)
    toolset = await manifest.resolve(manifest.codes(), ctx or context(), **resolve)
    assert len(toolset.tools) == 1, toolset.skipped
    return manifest, toolset.tools[0]


async def test_query_merges_with_a_query_string_already_in_the_url(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json",
                          [search_api(server.base_url + "/v1/search?api=2&x=a%20b")])
    manifest, tool = await one_tool(path)
    async with manifest:
        await tool.ainvoke({"q": "tea & cake", "exact": True, "limit": 3})
    assert server.last().raw_path == (
        "/v1/search?api=2&x=a%20b&exact=true&kind=a&limit=3&q=tea+%26+cake")


async def test_bad_arguments_are_refused_before_any_request(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")])
    manifest, tool = await one_tool(path)
    async with manifest:
        outputs = [
            await tool.ainvoke({"q": "x", "kind": "c"}),        # not in the enum
            await tool.ainvoke({"q": "x", "limit": 99}),        # over the maximum
            await tool.ainvoke({"q": ""}),                      # under minLength
            await tool.ainvoke({"kind": "a"}),                  # missing required
            await tool.ainvoke({"q": "x", "limit": True}),      # a boolean is not a number
            await tool.ainvoke({"q": "x", "unknown": 1}),       # extra argument
        ]
    assert server.received == []
    for output in outputs:
        assert output.startswith("Error: invalid arguments for search"), output
    assert "kind" in outputs[0] and "limit" in outputs[1] and "unknown" in outputs[5]


async def test_tool_call_round_trip_gives_tool_messages_with_status(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")])
    manifest, tool = await one_tool(path)
    message = AIMessage(content="", tool_calls=[
        {"name": "search", "args": {"q": "ok"}, "id": "call-1"},
        {"name": "search", "args": {"q": "x", "kind": "zzz"}, "id": "call-2"},
    ])
    async with manifest:
        good = await tool.ainvoke({**message.tool_calls[0], "type": "tool_call"})
        bad = await tool.ainvoke({**message.tool_calls[1], "type": "tool_call"})
        server.responder = lambda request: (503, {}, b"upstream down, retry later")
        failed = await tool.ainvoke({**message.tool_calls[0], "type": "tool_call"})
    assert isinstance(good, ToolMessage) and good.status == "success"
    assert good.content == '{"ok": true}' and good.tool_call_id == "call-1"
    assert isinstance(bad, ToolMessage) and bad.status == "error"
    assert str(bad.content).startswith("Error")
    assert isinstance(failed, ToolMessage) and failed.status == "error"
    failure = str(failed.content)
    assert failure.startswith("Error: HTTP 503 from GET http://127.0.0.1:")
    assert "upstream down, retry later" in failure and "try again later" in failure


async def test_openai_tool_schema_is_the_declared_schema(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")])
    manifest, tool = await one_tool(path)
    await manifest.aclose()
    assert convert_to_openai_tool(tool) == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search things",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Search text", "minLength": 1},
                    "kind": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                    "exact": {"type": "boolean", "description": "Exact match"},
                },
                "required": ["q"],
                "additionalProperties": False,
            },
        },
    }


async def test_argument_named_like_a_pydantic_attribute_works(
    server: RecordingServer, tmp_path: Path
) -> None:
    capability = api_capability(
        "lookup", server.base_url + "/items/{schema}",
        properties={"schema": {"type": "string"}, "model_config": {"type": "integer"}},
        arguments={"schema": {"bindings": ["path"], "type": "string"},
                   "model_config": {"bindings": ["query"], "type": "integer"}},
        required=["schema"],
    )
    manifest, tool = await one_tool(write_manifest(tmp_path / "m.json", [capability]))
    async with manifest:
        await tool.ainvoke({"schema": "v1", "model_config": 3})
    assert server.last().raw_path == "/items/v1?model_config=3"
    assert set(convert_to_openai_tool(tool)["function"]["parameters"]["properties"]) == {
        "schema", "model_config"}


async def test_settings_are_substituted_before_slots_and_never_from_arguments(
    server: RecordingServer, tmp_path: Path
) -> None:
    capability = api_capability(
        "echo", server.base_url + "/t/${TENANT}/{item}",
        method="POST",
        properties={"item": {"type": "string"}, "note": {"type": "string"}},
        arguments={"item": {"bindings": ["path"], "type": "string"},
                   "note": {"bindings": ["template"], "type": "string"}},
        required=["item", "note"],
        body_template='{"key": "${TOKEN}", "note": "{note}"}',
        headers={"Content-Type": "application/json", "X-Tenant": "${TENANT}"},
        placeholders=["TENANT", "TOKEN"],
    )
    ctx = context(settings={"TENANT": "acme{item}"})
    manifest, tool = await one_tool(write_manifest(tmp_path / "m.json", [capability]), ctx)
    async with manifest:
        await tool.ainvoke({"item": "${TOKEN}", "note": 'say "${TOKEN}"\n{item}'})
    received = server.last()
    # The setting's "{item}" stays literal (httpx percent-encodes the braces), and
    # the argument's "${TOKEN}" is encoded text, not the secret.
    assert received.raw_path == "/t/acme%7Bitem%7D/%24%7BTOKEN%7D"
    assert received.header("X-Tenant") == "acme{item}"
    assert json.loads(received.body) == {"key": SECRET, "note": 'say "${TOKEN}"\n{item}'}


async def test_unresolved_placeholder_skips_the_capability_with_reason_and_log(
    server: RecordingServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    capability = search_api(server.base_url + "/s")
    capability["api"]["headers"] = {"Authorization": "Bearer ${MISSING_KEY}"}
    manifest = load(write_manifest(tmp_path / "m.json", [capability]))
    with caplog.at_level(logging.WARNING):
        toolset = await manifest.resolve(["search"], context())
    await manifest.aclose()
    assert toolset.tools == []
    assert [entry.code for entry in toolset.skipped] == ["search"]
    assert "${MISSING_KEY}" in toolset.skipped[0].reason
    assert "capability search skipped" in caplog.text and "MISSING_KEY" in caplog.text


async def test_header_value_with_line_break_skips_without_logging_the_value(
    server: RecordingServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = load(write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")]))
    evil = "abcd\r\nX-Injected: yes"
    ctx = RuntimeContext(user_id=1, group_id=2, chat_id=3,
                         settings=StaticSettings({"TOKEN": evil}))
    with caplog.at_level(logging.DEBUG):
        toolset = await manifest.resolve(["search"], ctx)
    await manifest.aclose()
    assert toolset.tools == [] and toolset.skipped[0].code == "search"
    assert "CR, LF or NUL" in toolset.skipped[0].reason
    assert "X-Injected" not in caplog.text and "X-Injected" not in toolset.skipped[0].reason
    assert server.received == []


async def test_secrets_are_redacted_from_outputs_and_errors(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await one_tool(
        write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")]))
    server.responder = lambda request: (
        200, {}, f"auth was {request.header('Authorization')}".encode())
    async with manifest:
        echoed = await tool.ainvoke({"q": "x"})
        server.responder = lambda request: (
            401, {}, f'{{"error": "bad token {SECRET}"}}'.encode())
        refused = await tool.ainvoke({"q": "x"})
    assert echoed == "auth was Bearer [redacted]"
    assert SECRET not in refused and "[redacted]" in refused
    assert refused.startswith("Error: HTTP 401") and "settings" in refused


async def test_override_added_argument_is_validated_then_dropped(
    server: RecordingServer, tmp_path: Path
) -> None:
    override = ToolOverride(
        tool="search", description_append=" (tagged)",
        input_schema_patch={"properties": {"audience": {"type": "string",
                                                        "enum": ["team", "me"]}}},
    )
    manifest, tool = await one_tool(
        write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")]),
        overrides=[override])
    async with manifest:
        refused = await tool.ainvoke({"q": "x", "audience": "world"})
        await tool.ainvoke({"q": "x", "audience": "team"})
    assert refused.startswith("Error: invalid arguments")
    assert len(server.received) == 1
    assert server.last().raw_path == "/s?kind=a&q=x"
    assert tool.description == "Search things (tagged)"


async def test_namespace_override_renames_the_exposed_api_tool(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await one_tool(
        write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")]),
        overrides=[ToolOverride(tool="search", namespace="lookup")])
    await manifest.aclose()
    assert tool.name == "lookup__search"
    assert convert_to_openai_tool(tool)["function"]["name"] == "lookup__search"


def upload_api(base_url: str, multiple: bool = False) -> dict[str, Any]:
    file_schema: dict[str, Any] = {"type": "integer", "description": "A document id"}
    if multiple:
        file_schema = {"type": "array", "items": {"type": "integer"}}
    return api_capability(
        "upload", base_url + "/up", method="POST",
        properties={"file": file_schema, "note": {"type": "string"}},
        arguments={"file": {"bindings": ["file"], "type": "integer", "multiple": multiple},
                   "note": {"bindings": ["body"], "type": "string"}},
        required=["file"],
    )


async def test_document_of_another_chat_is_refused_before_fetching_or_sending(
    server: RecordingServer, tmp_path: Path
) -> None:
    documents = DocumentStore(Document(1, 42, "a.txt", b"mine"),
                              Document(2, 99, "b.txt", b"theirs"))
    path = write_manifest(tmp_path / "m.json", [upload_api(server.base_url, multiple=True)])
    manifest, tool = await one_tool(path, context(documents=documents))
    async with manifest:
        refused = await tool.ainvoke({"file": [1, 2]})
        missing = await tool.ainvoke({"file": [5]})
        await tool.ainvoke({"file": [1, 1], "note": "twice"})
    assert refused.startswith("Error") and "document 2 is not in this chat" in refused
    assert "document 5 does not exist" in missing
    assert documents.fetched == [1, 1]
    assert len(server.received) == 1
    assert server.last().body.count(b'name="file"; filename="a.txt"') == 2


async def test_file_tools_are_absent_without_a_chat_and_capped_in_size(
    server: RecordingServer, tmp_path: Path
) -> None:
    documents = DocumentStore(Document(1, 42, "big.bin", b"x" * 2048))
    path = write_manifest(tmp_path / "m.json", [upload_api(server.base_url)])
    manifest = _load(path, registry=ToolRegistry(), allow_private_networks=True,
                     max_upload_bytes=1024)
    async with manifest:
        no_chat = await manifest.resolve(["upload"], context(chat_id=None, documents=documents))
        toolset = await manifest.resolve(["upload"], context(documents=documents))
        too_big = await toolset.tools[0].ainvoke({"file": 1})
    assert no_chat.tools == [] and "no chat" in no_chat.skipped[0].reason
    assert "over the upload limit of 1024 bytes" in too_big
    assert server.received == []


async def test_large_responses_are_truncated_with_a_note_and_timeouts_become_errors(
    server: RecordingServer, tmp_path: Path
) -> None:
    capability = search_api(server.base_url + "/s", max_response_bytes=64, timeout=0.5)
    manifest, tool = await one_tool(write_manifest(tmp_path / "m.json", [capability]))
    server.responder = lambda request: (200, {}, b"y" * 500)
    async with manifest:
        large = await tool.ainvoke({"q": "x"})
        server.responder = lambda request: (200, {}, b"z" * 64)
        exact = await tool.ainvoke({"q": "x"})
        # Held until the call ended: its 0.5 s timeout is the only way it can end.
        release = threading.Event()
        server.responder = held_until(release)
        try:
            slow = await tool.ainvoke({"q": "x"})
        finally:
            release.set()
    body, _, note = large.partition("\n\n")
    assert body == "y" * 64
    assert note.startswith("[truncated:") and "64 bytes" in note and "ask for less" in note
    assert exact == "z" * 64
    # Sent and left unanswered, or (on a loaded machine) not sent within the timeout: the
    # text says which, and a call that says it was not sent never reached the server.
    origin = server.base_url
    unanswered = (f"Error: search failed: no complete response from {origin} within 0.5 s; "
                  "try again later or ask for less")
    unsent = (f"Error: search was not called: its timeout of 0.5 s ran out before the request "
              f"to {origin} was sent; try again later")
    assert slow in (unanswered, unsent), slow
    if slow == unsent:
        assert len(server.received) == 2


def held_until(release: threading.Event) -> Any:
    """A responder that answers only once ``release`` is set (a hang guard bounds it)."""

    def respond(request: Any) -> tuple[int, dict[str, str], bytes]:
        release.wait(120)
        return 200, {}, b"late"

    return respond


async def test_private_network_is_refused_by_default(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")])
    manifest = _load(path, registry=ToolRegistry())
    async with manifest:
        toolset = await manifest.resolve(["search"], context())
        output = await toolset.tools[0].ainvoke({"q": "x"})
    assert output.startswith("Error: search failed:") and "127.0.0.1" in output
    assert server.received == []


async def test_argument_models_are_cached_per_manifest_and_sync_calls_answer(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [search_api(server.base_url + "/s")])
    manifest = load(path)
    async with manifest:
        first = (await manifest.resolve(["search"], context())).tools[0]
        second = (await manifest.resolve(["search"], context(chat_id=7))).tools[0]
        # A sync call from inside a running loop (a notebook cell) makes the request.
        assert first.invoke({"q": "x"}) == '{"ok": true}'
    assert first is not second
    assert first.args_schema is second.args_schema
    assert [request.raw_path for request in server.received] == ["/s?kind=a&q=x"]
    assert first.invoke({"q": "x"}).startswith("Error: search was not called: this manifest "
                                               "was closed")
    assert len(server.received) == 1


async def test_settings_in_the_url_are_encoded_for_their_part(
    server: RecordingServer, tmp_path: Path
) -> None:
    key = "a&evil=1#frag"
    url = server.base_url + "/v1/${PREFIX}/s?key=${QUERY_KEY}"
    path = write_manifest(tmp_path / "m.json", [search_api(url)])
    ctx = context(settings={"QUERY_KEY": key, "PREFIX": "team a/b?c"})
    manifest, tool = await one_tool(path, ctx)
    server.responder = lambda request: (200, {}, request.raw_path.encode())
    async with manifest:
        output = await tool.ainvoke({"q": "x"})
    # The setting cannot add a query parameter or cut the URL at a '#'.
    assert server.last().raw_path == "/v1/team%20a/b%3Fc/s?key=a%26evil%3D1%23frag&kind=a&q=x"
    assert "evil" not in output and "[redacted]" in output


async def test_a_secret_in_the_url_path_is_masked_in_the_spelling_that_was_sent(
    server: RecordingServer, tmp_path: Path
) -> None:
    secret = "tenant/key:with spaces"
    path = write_manifest(tmp_path / "m.json",
                          [search_api(server.base_url + "/t/${TENANT_KEY}/s")])
    manifest, tool = await one_tool(path, context(settings={"TENANT_KEY": secret}))
    server.responder = lambda request: (404, {}, f"no route {request.raw_path}".encode())
    async with manifest:
        output = await tool.ainvoke({"q": "x"})
    assert server.last().raw_path.startswith("/t/tenant/key:with%20spaces/s?")
    assert output.startswith("Error: HTTP 404") and "[redacted]" in output
    assert "tenant/key" not in output and "with%20spaces" not in output


async def test_a_file_tool_is_absent_without_a_document_service(
    server: RecordingServer, tmp_path: Path
) -> None:
    path = write_manifest(tmp_path / "m.json", [upload_api(server.base_url)])
    manifest = _load(path, registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        toolset = await manifest.resolve(["upload"], context(documents=None))
    assert toolset.tools == []
    assert "has no documents" in toolset.skipped[0].reason
    assert server.received == []
