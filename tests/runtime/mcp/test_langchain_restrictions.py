"""SPEC §9: ``McpConfig.connections`` never hands out a server its capability restricts.

langchain-mcp-adapters offer every tool a server lists and call it unasked, so a server
with ``allowed_tools``, an approval other than ``never`` or a pin is left out of the
langchain provider's connections, listed in ``skipped`` with a reason naming
``toolset.client_mcp_tools()``, and logged. Against a real MCP server on 127.0.0.1 the
raw client then reaches nothing, while ``client_mcp_tools()`` offers what the YAML allows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
from tests.support.pinning import Pinned, resolve
from tests.support.runtime import mcp_capability, write_manifest

client_module = pytest.importorskip("langchain_mcp_adapters.client")
fastmcp_server = pytest.importorskip("tests.support.fastmcp_server")

RESTRICTED = {
    "allowed_list": ({"allowed_tools": ["add"]}, "[allowed_tools]"),
    "allowed_filter": ({"allowed_tools": {"read_only": True}}, "[allowed_tools]"),
    "approval_always": ({"require_approval": "always"}, "[require_approval]"),
    "approval_unset": ({"require_approval": None}, "[require_approval]"),
    "approval_per_tool": ({"require_approval": {"never": {"tool_names": ["echo"]}}},
                          "[require_approval]"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with fastmcp_server.running_mcp_server() as running:
        yield running


async def toolset(tmp_path: Path, capabilities: list[dict[str, Any]]) -> Any:
    manifest = load_manifest(write_manifest(tmp_path / "m.json", capabilities),
                             registry=ToolRegistry(), allow_private_networks=True)
    codes = [capability["code"] for capability in capabilities]
    return await manifest.resolve(codes, RuntimeContext(user_id=1))


@pytest.mark.parametrize("kind", sorted(RESTRICTED))
async def test_a_restricted_server_is_left_out_of_the_connections_with_the_path_to_use(
    tmp_path: Path, server: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    options, rule = RESTRICTED[kind]
    found = await toolset(tmp_path, [mcp_capability("restricted", server_url=server.url,
                                                    **options),
                                     mcp_capability("open", server_url=server.url)])
    with caplog.at_level(logging.WARNING):
        config = found.mcp("langchain")
    assert list(config.connections) == ["open"]
    assert [entry["name"] for entry in config.mcp_servers] == ["open"]
    (skipped,) = config.skipped
    assert (skipped.code, skipped.server_label) == ("restricted", "restricted")
    assert skipped.reason.startswith(rule)
    assert "`await toolset.client_mcp_tools()`" in skipped.reason
    assert "'restricted'" in caplog.text and "toolset.client_mcp_tools()" in caplog.text


async def test_the_raw_client_reaches_nothing_the_capability_restricts(
    tmp_path: Path, server: Any
) -> None:
    found = await toolset(tmp_path, [mcp_capability(
        "arithmetic", server_url=server.url, allowed_tools=["add"])])
    connections = found.mcp("langchain").connections
    assert connections == {}
    # The recipe of docs/agents.md §5 gets no tool of the server at all...
    assert await client_module.MultiServerMCPClient(connections).get_tools() == []
    # ...and the client-side path offers exactly what the YAML allows.
    client = await found.client_mcp_tools(timeout=10)
    assert [tool.name for tool in client.tools] == ["add"]


async def test_a_pinned_server_is_left_out_too(pinned: Pinned) -> None:
    config = (await resolve(pinned.manifest, ["open"])).mcp("langchain")
    assert config.connections == {}
    (skipped,) = config.skipped
    assert skipped.reason.startswith("[pins]")
    assert "`await toolset.client_mcp_tools()`" in skipped.reason
