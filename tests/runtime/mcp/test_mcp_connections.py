"""``McpConfig.connections`` drives langchain-mcp-adapters against a real MCP server.

The server is FastMCP from the ``mcp`` package, over streamable HTTP on 127.0.0.1; the
connection's ``Authorization`` header comes from the context's settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.runtime import mcp_capability, write_manifest

client_module = pytest.importorskip("langchain_mcp_adapters.client")
mcp_server = pytest.importorskip("tests.support.mcp_server")


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with mcp_server.running_mcp_server() as running:
        yield running


async def langchain_config(tmp_path: Path, url: str) -> Any:
    path = write_manifest(tmp_path / "m.json", [mcp_capability(
        "arithmetic", server_url=url, headers={"Authorization": "Bearer ${ARITH_TOKEN}"},
        placeholders=["ARITH_TOKEN"])])
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"ARITH_TOKEN": "tok-arith"}))
    async with manifest:
        toolset = await manifest.resolve(["arithmetic"], ctx)
    return toolset


async def test_multi_server_client_lists_and_calls_the_tools(tmp_path: Path, server: Any) -> None:
    config = (await langchain_config(tmp_path, server.url)).mcp("langchain")
    assert config.connections == {"arithmetic": {
        "transport": "streamable_http", "url": server.url,
        "headers": {"Authorization": "Bearer tok-arith"}}}
    server.seen_headers.clear()
    client = client_module.MultiServerMCPClient(config.connections)
    tools = {tool.name: tool for tool in await client.get_tools()}
    assert set(tools) == {"add", "echo"}
    assert tools["add"].description == mcp_server.ADD_DESCRIPTION
    result = await tools["add"].ainvoke({"a": 2, "b": 40})
    assert "42" in str(result)
    echoed = await tools["echo"].ainvoke({"text": "capc"})
    assert "capc" in str(echoed)
    assert server.authorizations and set(server.authorizations) == {"Bearer tok-arith"}


async def test_the_named_server_entries_are_what_the_client_refuses(
    tmp_path: Path, server: Any
) -> None:
    # Why ``connections`` exists: the ``mcp_servers`` entries carry ``name`` (SPEC §5),
    # which the adapters pass on as a keyword the transport does not take.
    config = (await langchain_config(tmp_path, server.url)).mcp("langchain")
    entry = config.mcp_servers[0]
    assert entry["name"] == "arithmetic"
    client = client_module.MultiServerMCPClient({"arithmetic": entry})
    with pytest.raises(TypeError, match="name"):
        await client.get_tools()


async def test_only_the_langchain_provider_has_connections(tmp_path: Path, server: Any) -> None:
    toolset = await langchain_config(tmp_path, server.url)
    assert toolset.mcp("openai").connections == {}
    assert toolset.mcp("anthropic").connections == {}
    config = toolset.mcp("langchain")
    assert config.connections is not config.connections  # a fresh copy each time
    config.connections["arithmetic"]["url"] = "https://elsewhere.example"
    assert config.connections["arithmetic"]["url"] == server.url
