"""Every api example of the reference, compiled from capabilities/ by `capc compile`, sent
to a real HTTP server on 127.0.0.1: method, raw path, query, headers and body bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT
from tests.support.runtime import Document, DocumentStore, RecordingServer, seal

SETTINGS = {"WEATHER_API_KEY": "weather-key-123", "SMS_API_KEY": "sms-key-456",
            "API_TOKEN": "api-token-789"}


@pytest.fixture(scope="module")
def compiled_manifest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    output = tmp_path_factory.mktemp("compiled") / "manifest.json"
    compiled = run_capc("compile", "capabilities", "-o", str(output), cwd=REPO_ROOT)
    assert compiled.returncode == 0, compiled.stderr
    return json.loads(output.read_text(encoding="utf-8"))


def pointed_at(document: dict[str, Any], base_url: str, directory: Path) -> Path:
    """The compiled manifest with every api URL's origin moved to the local server."""
    for capability in document["capabilities"]:
        if capability["type"] == "api":
            capability["api"]["url"] = re.sub(r"^https://[^/]+", base_url,
                                              capability["api"]["url"])
    path = directory / "manifest.json"
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2) + "\n")
    return path


async def tool_for(
    compiled: dict[str, Any], server: RecordingServer, tmp_path: Path, code: str,
    documents: DocumentStore | None = None,
) -> Any:
    manifest = load_manifest(pointed_at(json.loads(json.dumps(compiled)), server.base_url,
                                        tmp_path), registry=ToolRegistry(),
                             allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, group_id=5, chat_id=42, settings=StaticSettings(SETTINGS),
                         documents=documents)
    toolset = await manifest.resolve([code], ctx)
    assert toolset.skipped == (), toolset.skipped
    (tool,) = toolset.tools
    return manifest, tool


async def test_get_weather_sends_query_with_default_and_bearer(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    reply = {"location": {"name": "São Paulo", "tz_id": "America/Sao_Paulo"},
             "current": {"temp_c": 24.5, "feelslike_c": 26.1, "wind_kph": 11.2,
                         "condition": {"text": "Partly cloudy", "icon": "//cdn/116.png"},
                         "uv": 6, "pressure_mb": 1014}}
    server.responder = lambda request: (
        200, {"Content-Type": "application/json"}, json.dumps(reply).encode())
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "get_weather")
    async with manifest:
        output = await tool.ainvoke({"location": "São Paulo"})
    received = server.last()
    # The example's select keeps the four fields a model needs.
    assert json.loads(output) == {"temperature": 24.5, "feels_like": 26.1,
                                  "conditions": "Partly cloudy", "wind_kph": 11.2}
    assert received.method == "GET"
    assert received.raw_path == "/v1/current?location=S%C3%A3o+Paulo&units=celsius"
    assert received.header("Authorization") == "Bearer weather-key-123"
    assert received.body == b""


async def test_send_sms_posts_flat_json(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "send_sms")
    async with manifest:
        await tool.ainvoke({"to": "+15551234567", "message": 'Hi "Bob" ü'})
    received = server.last()
    assert (received.method, received.raw_path) == ("POST", "/v1/messages")
    assert received.header("Content-Type") == "application/json"
    assert received.header("Authorization") == "Bearer sms-key-456"
    assert received.body == '{"message":"Hi \\"Bob\\" ü","to":"+15551234567"}'.encode()


async def test_send_sms_form_encodes_values_into_the_raw_template(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "send_sms_form")
    async with manifest:
        await tool.ainvoke({"to": "+15551234567", "body": "Tom & Jerry=friends"})
    received = server.last()
    assert received.method == "POST"
    assert received.header("Content-Type") == "application/x-www-form-urlencoded"
    assert received.body == b"To=%2B15551234567&Body=Tom+%26+Jerry%3Dfriends"


async def test_get_chat_messages_encodes_the_path_slot_including_slash(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "get_chat_messages")
    async with manifest:
        await tool.ainvoke({"chat_id": "../admin/x y", "limit": 5})
        refused = await tool.ainvoke({"chat_id": ".."})
    received = server.last()
    assert received.method == "GET"
    assert received.raw_path == "/v1/chats/..%2Fadmin%2Fx%20y/messages?limit=5"
    assert received.header("Authorization") == "Bearer api-token-789"
    assert refused.startswith("Error") and "chat_id" in refused
    assert len(server.received) == 1


async def test_post_message_renders_nested_template_with_native_leaves(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "post_message")
    async with manifest:
        await tool.ainvoke({"chat_id": "c1", "text": "hello {tag} ${API_TOKEN}",
                            "pinned": True, "tag": "urgent"})
    received = server.last()
    assert (received.method, received.raw_path) == ("POST", "/v1/chats/c1/messages")
    assert received.header("Content-Type") == "application/json"
    body = json.loads(received.body)
    assert body == {
        "source": "primethink",
        "message": {"text": "hello {tag} ${API_TOKEN}", "pinned": True},
        "tags": ["inbound", "urgent"],
    }
    assert b'"pinned":true' in received.body
    assert b"api-token-789" not in received.body


async def test_attach_file_uploads_a_chat_document_as_multipart(
    compiled_manifest: dict[str, Any], server: RecordingServer, tmp_path: Path
) -> None:
    documents = DocumentStore(Document(7, 42, "report.pdf", b"%PDF-1.4 bytes"))
    manifest, tool = await tool_for(compiled_manifest, server, tmp_path, "attach_file",
                                    documents)
    async with manifest:
        await tool.ainvoke({"chat_id": "42", "file": 7, "caption": "Q3 report"})
    received = server.last()
    assert (received.method, received.raw_path) == ("POST", "/v1/chats/42/attachments")
    content_type = received.header("Content-Type") or ""
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.split("boundary=", 1)[1].encode()
    parts = received.body.split(b"--" + boundary)
    file_part = next(part for part in parts if b'name="file"' in part)
    caption_part = next(part for part in parts if b'name="caption"' in part)
    assert b'filename="report.pdf"' in file_part
    assert b"Content-Type: application/pdf" in file_part
    assert file_part.endswith(b"\r\n\r\n%PDF-1.4 bytes\r\n")
    assert caption_part.endswith(b"\r\n\r\nQ3 report\r\n")
    assert received.header("Authorization") == "Bearer api-token-789"
