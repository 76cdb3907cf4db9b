"""Provenance on every tool: capability code, kind, manifest digest, profile (SPEC §13),
as LangChain metadata a callback handler receives when the tool runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.tools import tool

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.pinning import TOKEN, Pinned
from tests.support.runtime import (
    RecordingServer,
    api_capability,
    internal_capability,
    write_manifest,
)
from tests.support.signing import manifest_digest


class MetadataRecorder(AsyncCallbackHandler):
    """Records the metadata LangChain hands a callback handler when a tool starts."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def on_tool_start(self, serialized: dict[str, Any], input_str: str, *,
                            run_id: UUID, metadata: dict[str, Any] | None = None,
                            **kwargs: Any) -> None:
        self.seen.append(dict(metadata or {}))


@tool
def remember(fact: str) -> str:
    """Remember a fact."""
    return f"remembered {fact}"


def registry() -> ToolRegistry:
    registered = ToolRegistry()
    registered.register_tools("memory", [remember.model_copy(update={"metadata": {"team": "x"}})])
    return registered


def manifest_path(tmp_path: Path, server: RecordingServer) -> Path:
    return write_manifest(tmp_path / "manifest.json", [
        internal_capability("memory"),
        api_capability("search", f"{server.base_url}/search",
                       properties={"q": {"type": "string"}},
                       arguments={"q": {"bindings": ["query"], "type": "string"}}),
    ])


async def test_api_and_internal_tools_carry_their_provenance(
        tmp_path: Path, server: RecordingServer) -> None:
    path = manifest_path(tmp_path, server)
    digest = manifest_digest(path)
    plugins = registry()
    manifest = load_manifest(path, registry=plugins, allow_private_networks=True)
    toolset = await manifest.resolve(["memory", "search"], RuntimeContext())
    memory, search = toolset.tools
    assert search.metadata == {
        "capability": "search", "original_name": "search", "capc.capability": "search",
        "capc.kind": "api", "capc.manifest_digest": digest,
    }
    assert memory.metadata == {
        "team": "x", "capability": "memory", "capc.capability": "memory",
        "capc.kind": "internal", "capc.manifest_digest": digest,
    }
    # The plugin's own tool is not changed; the tagged copy is made once per manifest.
    assert plugins.tools_for("memory")[0].metadata == {"team": "x"}
    again = await manifest.resolve(["memory"], RuntimeContext())
    assert again.tools[0] is memory
    await manifest.aclose()


async def test_a_profile_is_recorded_and_a_callback_handler_sees_it(
        tmp_path: Path, server: RecordingServer) -> None:
    path = manifest_path(tmp_path, server)
    manifest = load_manifest(path, registry=registry(), allow_private_networks=True)
    toolset = await manifest.resolve(["memory", "search"], RuntimeContext(),
                                     profile="support-bot")
    recorder = MetadataRecorder()
    for built, arguments in zip(toolset.tools, [{"fact": "tea"}, {"q": "tea"}], strict=True):
        await built.ainvoke(arguments, config={"callbacks": [recorder]})
    assert [(seen["capc.capability"], seen["capc.kind"], seen["capc.profile"])
            for seen in recorder.seen] == [("memory", "internal", "support-bot"),
                                           ("search", "api", "support-bot")]
    assert {seen["capc.manifest_digest"] for seen in recorder.seen} == {manifest.digest}
    plain = await manifest.resolve(["memory"], RuntimeContext())
    assert "capc.profile" not in plain.tools[0].metadata
    await manifest.aclose()


async def test_client_side_mcp_tools_carry_their_provenance(pinned: Pinned) -> None:
    manifest = load_manifest(pinned.manifest, registry=ToolRegistry(),
                             allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"CALC_TOKEN": TOKEN}))
    toolset = await manifest.resolve(["calc"], ctx, profile="ops")
    client = await toolset.client_mcp_tools(timeout=10)
    assert client.tools
    for built in client.tools:
        assert (built.metadata["capc.capability"], built.metadata["capc.kind"],
                built.metadata["capc.manifest_digest"], built.metadata["capc.profile"]) == (
            "calc", "mcp", manifest.digest, "ops")
