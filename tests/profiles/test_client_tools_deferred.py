"""Client-side MCP tools of a profile (``Toolset.client_mcp_tools``) against a real MCP
server on 127.0.0.1: the tools of a deferred server carry ``defer_loading`` in ``extras``,
those of a server sent up front do not, and every one carries the profile's name."""

from __future__ import annotations

import json
from pathlib import Path

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.mcp_server import running_mcp_server
from tests.support.runtime import manifest_document, mcp_capability, seal


async def test_the_flag_follows_each_server_code(tmp_path: Path) -> None:
    with running_mcp_server() as server:
        # Two capabilities on one server, each allowed one of its tools.
        document = manifest_document([
            mcp_capability("adder", server_label="adder", server_url=server.url,
                           allowed_tools=["add"]),
            mcp_capability("echoer", server_label="echoer", server_url=server.url,
                           allowed_tools=["echo"])])
        document["profiles"] = [{
            "name": "wiki-bot", "description": None, "capabilities": ["adder", "echoer"],
            "deferred": ["adder"], "budget": {},
            "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
        path = tmp_path / "manifest.json"
        path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
        manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
        async with manifest:
            toolset = await manifest.resolve_profile(
                "wiki-bot", RuntimeContext(settings=StaticSettings({})))
            client = await toolset.client_mcp_tools(timeout=10)
            plain = await (await manifest.resolve(
                ["adder"], RuntimeContext(settings=StaticSettings({})))).client_mcp_tools(
                    timeout=10)
    assert {tool.name: (tool.extras or {}).get("defer_loading") for tool in client.tools} == {
        "add": True, "echo": None}
    assert {tool.metadata["profile"] for tool in client.tools} == {"wiki-bot"}
    # Without a profile nothing is deferred.
    assert [(tool.name, (tool.extras or {}).get("defer_loading")) for tool in plain.tools] == [
        ("add", None)]
