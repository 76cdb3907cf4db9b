"""SPEC §16 at run time: api tools with an output schema against a real server on 127.0.0.1.

A tool call yields a ToolMessage whose content is the text the model reads and whose
artifact is the structured value, masked like the text, and only when it matches the
shaped schema; anything else (a mismatch, a reply that is not JSON, a cut) is text with a
note, logged once per tool, counted, never raised.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from compiler.output_shaping import shaped_output_schema
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.api.output import CUT_NOTE, NOT_JSON_NOTE, OutputContract
from tests.support.runtime import api_capability, internal_capability, write_manifest
from tests.support.scripted_server import Reply, ScriptedServer, scripted_server

KEY = "key-5f4e3d2c1b0a"
DECLARED = {
    "type": "object", "required": ["items"],
    "properties": {"items": {"type": "array", "items": {
        "type": "object", "required": ["id"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}},
}


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


def json_reply(value: Any) -> Reply:
    return Reply(200, json.dumps(value).encode(), (("Content-Type", "application/json"),))


async def call_tool(tmp_path: Path, url: str, response: dict[str, Any] | None = None,
                    output_schema: Any = DECLARED, calls: int = 1,
                    max_response_bytes: int = 1 << 21) -> tuple[list[ToolMessage], Any]:
    """Compile-time shaping of ``output_schema``, then ``calls`` tool calls; the messages
    and the tool."""
    entry = api_capability(
        "lookup", url, properties={}, arguments={}, headers={"X-Key": "${KEY}"},
        placeholders=["KEY"], timeout=60.0, max_response_bytes=max_response_bytes)
    if response is not None:
        entry["api"]["response"] = {"select": None, "max_items": None, "max_chars": None,
                                    **response}
    options = {"output_schema": output_schema, "response": response or {}}
    entry["tool"]["output_schema"] = shaped_output_schema(options).schema
    manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": KEY}))
    async with manifest:
        tool = (await manifest.resolve(["lookup"], ctx)).tools[0]
        messages = [await tool.ainvoke({"type": "tool_call", "name": "lookup", "args": {},
                                        "id": f"c{index}"}) for index in range(calls)]
    return messages, tool


async def test_a_matching_reply_is_text_plus_the_structured_value(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    reply = {"items": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3}]}
    url = scripted.script("/r", json_reply(reply))
    [message], tool = await call_tool(tmp_path, url, {"select": "items[*].id", "max_items": 2})
    assert message.artifact == [1, 2]
    assert message.content.split("\n\n")[0] == "[1,2]"
    assert "max_items" in message.content  # the cut is announced in the text, as ever
    assert tool.response_format == "content_and_artifact"
    assert tool.metadata["output_schema"] == {"type": "array", "items": {"type": "integer"},
                                              "maxItems": 2}


async def test_a_tool_without_output_schema_is_unchanged(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    url = scripted.script("/r", json_reply({"items": []}))
    [message], tool = await call_tool(tmp_path, url, output_schema=None)
    assert message.content == '{"items": []}' and message.artifact is None
    assert tool.response_format == "content" and "output_schema" not in tool.metadata


async def test_a_reply_that_does_not_match_is_text_with_a_note_logged_once(
    scripted: ScriptedServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = scripted.script("/r", json_reply({"items": [{"id": "seven"}]}))
    with caplog.at_level(logging.WARNING, logger="compiler.runtime.api.output"):
        messages, tool = await call_tool(tmp_path, url, calls=3)
    for message in messages:
        assert message.artifact is None and message.status == "success"
        assert message.content.startswith('{"items": [{"id": "seven"}]}')
        assert "does not match the tool's output schema ($.items[0].id: expected integer, " \
               "got string)" in message.content
    assert len([r for r in caplog.records if "does not match" in r.getMessage()]) == 1
    counters = tool.coroutine._blueprint.output.counters
    assert (counters.matched, counters.mismatched) == (0, 3)


async def test_a_select_yielding_a_scalar_where_the_schema_says_object(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # The override-style schema describes the selected value: an object. The reply's
    # `items` is a number, so select yields a scalar: text, with a clear note.
    url = scripted.script("/r", json_reply({"items": 5}))
    [message], _ = await call_tool(tmp_path, url, {"select": "items"},
                                   output_schema={"type": "object", "properties": {
                                       "items": {"type": ["object", "integer"]}}})
    assert message.artifact == 5  # the projected schema admits what the declared one does
    [message], _ = await call_tool(tmp_path, url, {"select": "items"},
                                   output_schema={"type": "object", "required": ["items"],
                                                  "properties": {"items": {"type": "object"}}})
    assert message.artifact is None
    assert "($: expected object, got integer)" in message.content


async def test_a_reply_that_is_not_json_is_text(scripted: ScriptedServer, tmp_path: Path) -> None:
    url = scripted.script("/r", Reply(200, b"<html>busy</html>", (("Content-Type", "text/html"),)))
    [message], _ = await call_tool(tmp_path, url)
    assert message.artifact is None
    assert message.content == f"<html>busy</html>\n\n{NOT_JSON_NOTE}"


@pytest.mark.parametrize("cut", ["max_chars", "byte cap"])
async def test_a_cut_reply_is_never_structured(
    scripted: ScriptedServer, tmp_path: Path, cut: str
) -> None:
    reply = {"items": [{"id": index, "name": "x" * 50} for index in range(40)]}
    url = scripted.script("/r", json_reply(reply))
    if cut == "max_chars":
        [message], _ = await call_tool(tmp_path, url, {"max_chars": 100})
        assert "max_chars 100" in message.content
    else:
        [message], _ = await call_tool(tmp_path, url, max_response_bytes=300)
        assert "[truncated:" in message.content
    assert message.artifact is None and CUT_NOTE in message.content


async def test_the_structured_value_is_masked_like_the_text(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    # The server echoes the secret as a value, JSON-escaped, and as a key.
    body = ('{"items": [{"id": 1, "name": "token \\u006b' + KEY[1:] + '"}], "'
            + KEY + '": 1}').encode()
    url = scripted.script("/r", Reply(200, body, (("Content-Type", "application/json"),)))
    [message], _ = await call_tool(tmp_path, url)
    assert message.artifact == {"items": [{"id": 1, "name": "token [redacted]"}],
                                "[redacted]": 1}
    assert KEY not in message.content and KEY not in json.dumps(message.artifact)


async def test_a_10_mib_reply_is_checked_within_bounds(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    items = [{"id": index, "name": "n" * 80} for index in range(100_000)]
    body = json.dumps({"items": items}).encode()
    assert len(body) > 10 * 1024 * 1024
    url = scripted.script("/r", Reply(200, body, (("Content-Type", "application/json"),)))
    [message], _ = await call_tool(tmp_path, url, {"select": "items[-1]"},
                                   max_response_bytes=16 << 20)
    assert message.artifact == items[-1]


def test_a_schema_the_runtime_cannot_check_is_not_used(
    caplog: pytest.LogCaptureFixture
) -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(10_000):
        deep = {"type": "object", "properties": {"a": deep}}
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"}
                                             for i in range(30_000)}}
    with caplog.at_level(logging.WARNING):
        assert OutputContract.for_tool("t", deep) is None
        assert OutputContract.for_tool("t", huge) is None
        assert OutputContract.for_tool("t", {"$ref": "#/$defs/x"}) is None
    assert "levels deep" in caplog.text and "more than 20000 nodes" in caplog.text
    assert "'$ref'" in caplog.text


async def test_a_plugin_tool_with_an_override_output_schema(tmp_path: Path) -> None:
    def lookup(query: str) -> str:
        """Look a contact up."""
        return json.dumps({"name": query, "id": 7})

    registry = ToolRegistry()
    registry.register_tools("crm", [StructuredTool.from_function(lookup)])
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
    override = {"tool": "lookup", "source": {"path": "o.yaml", "line": 1},
                "patch": {"output_schema": schema}}
    path = write_manifest(tmp_path / "m.json", [internal_capability("crm")],
                          overrides=[override])
    manifest = load_manifest(path, registry=registry)
    [tool] = (await manifest.resolve(["crm"], RuntimeContext())).tools
    message = await tool.ainvoke({"type": "tool_call", "name": "lookup",
                                  "args": {"query": "ada"}, "id": "c1"})
    assert message.artifact == {"name": "ada", "id": 7}
    assert json.loads(message.content) == {"name": "ada", "id": 7}
    assert tool.metadata["output_schema"] == schema
