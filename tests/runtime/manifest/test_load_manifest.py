"""Loading: digest and version checks that name what failed, immutability, resolve rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import ManifestError, RuntimeContext, StaticSettings, ToolRegistry
from compiler.runtime import load_manifest as _load
from tests.support.runtime import (
    api_capability,
    internal_capability,
    manifest_document,
    mcp_capability,
    seal,
    write_manifest,
)


def load(path: Path, registry: ToolRegistry | None = None) -> Any:
    return _load(path, registry=registry or ToolRegistry())


def weather() -> dict[str, Any]:
    return api_capability(
        "get_weather", "https://api.weather.com/v1/current",
        properties={"location": {"type": "string"}},
        arguments={"location": {"bindings": ["query"], "type": "string"}},
        required=["location"], headers={"Authorization": "Bearer ${WEATHER_API_KEY}"},
        placeholders=["WEATHER_API_KEY"],
    )


def test_a_sealed_manifest_loads(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.json", [weather(), mcp_capability("deepwiki")])
    manifest = load(path)
    assert manifest.codes() == ["deepwiki", "get_weather"]
    assert manifest.digest == json.loads(path.read_text())["digest"]


def test_an_edited_manifest_is_refused_naming_the_digest(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.json", [weather()])
    path.write_text(path.read_text().replace("api.weather.com", "evil.example.com"))
    with pytest.raises(ManifestError) as caught:
        load(path)
    assert caught.value.check == "digest"
    assert "digest" in str(caught.value) and "changed after it was compiled" in str(caught.value)


def test_an_unsupported_version_is_refused_naming_the_version(tmp_path: Path) -> None:
    document = manifest_document([weather()])
    document["manifest_version"] = 2
    path = tmp_path / "m.json"
    path.write_text(json.dumps(seal(document)))
    with pytest.raises(ManifestError) as caught:
        load(path)
    assert caught.value.check == "manifest_version"
    assert "manifest_version 2 is not supported" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "check"),
    [
        (b"\xff\xfe not utf-8", "json"),
        (b"[1, 2]", "json"),
        (b'{"manifest_version": 1, "manifest_version": 1}', "json"),
        (b'{"manifest_version": 1}', "digest"),
    ],
)
def test_unreadable_manifests_name_the_check(tmp_path: Path, content: bytes, check: str) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(ManifestError) as caught:
        load(path)
    assert caught.value.check == check


def test_a_missing_file_is_a_read_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as caught:
        load(tmp_path / "absent.json")
    assert caught.value.check == "read"


def test_a_malformed_entry_is_a_structure_error_naming_it(tmp_path: Path) -> None:
    broken = weather()
    del broken["tool"]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest_document([broken])))
    with pytest.raises(ManifestError) as caught:
        load(path)
    assert caught.value.check == "structure"
    assert "get_weather" in str(caught.value) and "'tool'" in str(caught.value)


def test_the_loaded_manifest_is_immutable(tmp_path: Path) -> None:
    manifest = load(write_manifest(tmp_path / "m.json", [weather()]))
    capability = manifest.capability("get_weather")
    with pytest.raises(TypeError):
        capability.api.headers["Authorization"] = "Bearer stolen"
    with pytest.raises(TypeError):
        capability.tool.input_schema["properties"]["x"] = {}
    with pytest.raises(TypeError):
        manifest.data.capabilities["x"] = capability
    with pytest.raises(AttributeError):
        capability.code = "other"
    descriptor = capability.tool.descriptor()
    descriptor.input_schema["properties"].clear()
    assert "location" in capability.tool.input_schema["properties"]


async def test_resolve_skips_unknown_codes_and_false_conditions(tmp_path: Path) -> None:
    from langchain_core.tools import tool

    @tool("draw")
    async def draw(shape: str) -> str:
        """Draw a shape on the canvas."""
        return shape

    registry = ToolRegistry()
    registry.register_tools("canvas", [draw])
    path = write_manifest(tmp_path / "m.json", [
        internal_capability("canvas", when={"page_type": "canvas"}),
    ])
    manifest = load(path, registry)
    on_canvas = await manifest.resolve(["canvas", "nope"], RuntimeContext(page_type="canvas"))
    elsewhere = await manifest.resolve(["canvas"], RuntimeContext(page_type="chat"))
    unknown = await manifest.resolve(["canvas"], RuntimeContext())
    assert [t.name for t in on_canvas.tools] == ["draw"]
    assert on_canvas.skipped[0].code == "nope"
    assert "no such capability" in on_canvas.skipped[0].reason
    assert elsewhere.tools == [] and "page_type is 'chat'" in elsewhere.skipped[0].reason
    assert unknown.tools == [] and "'page_type' is not set" in unknown.skipped[0].reason


async def test_tools_are_deduplicated_across_codes(tmp_path: Path) -> None:
    from langchain_core.tools import tool

    @tool("shared")
    async def shared(text: str) -> str:
        """A tool registered under two codes."""
        return text

    @tool("only_rag")
    async def only_rag(text: str) -> str:
        """A rag tool."""
        return text

    registry = ToolRegistry()
    registry.register_tools("base", [shared], name="Base", description="Core")
    registry.register_tools("rag", [shared, only_rag])
    registry.register_tools("rag", [only_rag])
    path = write_manifest(tmp_path / "m.json", [
        internal_capability("base"), internal_capability("rag"),
        internal_capability("base_rag", codes=["base", "rag"]),
    ])
    manifest = load(path, registry)
    toolset = await manifest.resolve(["base_rag", "base", "rag", "base"], RuntimeContext())
    assert [t.name for t in toolset.tools] == ["shared", "only_rag"]
    assert registry.get("base").name == "Base"  # type: ignore[union-attr]
    assert [t.name for t in registry.tools_for("rag")] == ["shared", "only_rag"]


async def test_mcp_header_placeholders_resolve_per_context(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.json", [mcp_capability(
        "ha_remote", headers={"Authorization": "Bearer ${HA_REMOTE_TOKEN}"},
        placeholders=["HA_REMOTE_TOKEN"])])
    manifest = load(path)
    alice = RuntimeContext(user_id=1, settings=StaticSettings({"HA_REMOTE_TOKEN": "alice-tok"}))
    bob = RuntimeContext(user_id=2, settings=StaticSettings({}))
    with_token = await manifest.resolve(["ha_remote"], alice)
    without = await manifest.resolve(["ha_remote"], bob)
    assert with_token.mcp("openai").tools[0]["headers"] == {"Authorization": "Bearer alice-tok"}
    assert without.mcp("openai").tools == []
    assert without.skipped[0].code == "ha_remote" and "HA_REMOTE_TOKEN" in without.skipped[0].reason


async def test_settings_are_looked_up_once_per_context(tmp_path: Path) -> None:
    class CountingSettings:
        def __init__(self) -> None:
            self.calls: list[tuple[str, Any, Any]] = []

        async def get_user_setting_value(self, name: str, user_id: Any, group_id: Any) -> str:
            self.calls.append((name, user_id, group_id))
            return "value-" + name

    settings = CountingSettings()
    path = write_manifest(tmp_path / "m.json", [weather()])
    async with load(path) as manifest:
        ctx = RuntimeContext(user_id=7, group_id=8, settings=settings)
        await manifest.resolve(["get_weather"], ctx)
        await manifest.resolve(["get_weather"], ctx)
    assert settings.calls == [("WEATHER_API_KEY", 7, 8)]


async def test_a_closed_manifest_refuses_to_resolve(tmp_path: Path) -> None:
    manifest = load(write_manifest(tmp_path / "m.json", [weather()]))
    await manifest.aclose()
    with pytest.raises(Exception, match="closed"):
        await manifest.resolve(["get_weather"], RuntimeContext())
