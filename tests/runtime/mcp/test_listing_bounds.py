"""Issue 19 item 6: what listing an MCP server's tools reads is bounded (bytes, tools, time).

The server is a real HTTP server on 127.0.0.1 (tests.support.hostile_mcp) speaking MCP to
the official SDK client; what is asserted is what capc said and how much it read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.pins.lock_command import EXIT_UNAVAILABLE, LockRequest, run_lock
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.mcp.listing_limits import (
    MAX_LISTED_TOOLS,
    MAX_LISTING_BYTES,
    ListingTooLarge,
)
from compiler.runtime.mcp.sessions import list_server_tools
from tests.support.hostile_mcp import (
    HostileMcpServer,
    endless_listing,
    hostile_mcp_server,
    tool,
    tools_listing,
)

POLICY = EgressPolicy(allow_private_networks=True)
# Long enough that a listing stopped by its byte bound never reaches it: a bound that did
# not trip would show as a timeout in the message.
TIMEOUT = 120.0


@pytest.fixture
def hostile() -> Iterator[HostileMcpServer]:
    with hostile_mcp_server() as server:
        yield server


async def test_a_normal_listing_is_read(hostile: HostileMcpServer) -> None:
    hostile.listing = tools_listing([tool("a"), tool("b")])
    listed = await list_server_tools(hostile.url, {}, POLICY, TIMEOUT)
    assert [entry["name"] for entry in listed] == ["a", "b"]


async def test_a_listing_over_the_byte_bound_is_refused(hostile: HostileMcpServer) -> None:
    hostile.listing = tools_listing([tool("big", "d" * (MAX_LISTING_BYTES + 1))])
    with pytest.raises(ListingTooLarge, match=f"larger than {MAX_LISTING_BYTES} bytes"):
        await list_server_tools(hostile.url, {}, POLICY, TIMEOUT)


async def test_an_endless_listing_stops_at_the_byte_bound(hostile: HostileMcpServer) -> None:
    hostile.listing = endless_listing
    with pytest.raises(ListingTooLarge, match=f"larger than {MAX_LISTING_BYTES} bytes"):
        await list_server_tools(hostile.url, {}, POLICY, TIMEOUT)
    # The client stopped reading: the server could not send much past the bound (what
    # sockets buffer on the way aside).
    assert hostile.bytes_sent < MAX_LISTING_BYTES + 16 * 1024 * 1024


async def test_a_listing_of_too_many_tools_is_refused(hostile: HostileMcpServer) -> None:
    hostile.listing = tools_listing([tool(f"t{index}") for index in range(MAX_LISTED_TOOLS + 1)])
    with pytest.raises(ListingTooLarge, match=f"more than {MAX_LISTED_TOOLS} tools"):
        await list_server_tools(hostile.url, {}, POLICY, TIMEOUT)


async def test_a_compressed_listing_is_refused(hostile: HostileMcpServer) -> None:
    # A few kilobytes of gzip that expand past the bound: the compressed size says nothing.
    hostile.listing = tools_listing([tool("zip", "z" * (MAX_LISTING_BYTES * 2))])
    hostile.gzip_listing = True
    with pytest.raises(ListingTooLarge, match="gzip-encoded listing"):
        await list_server_tools(hostile.url, {}, POLICY, TIMEOUT)


def _tree(root: Path, url: str) -> dict:
    tree = root / "capabilities"
    tree.mkdir(parents=True)
    (tree / "big.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: big\nname: big\ntype: mcp\noptions:\n"
        f"  server_label: big\n  server_url: {url}\n  require_approval: never\n")
    result = build([str(tree)], options=CompileOptions(allow_private_networks=True),
                   use_cache=False)
    assert result.manifest is not None, result.diagnostics
    return result.manifest


def test_capc_lock_refuses_a_huge_listing_with_a_clear_error(
    hostile: HostileMcpServer, tmp_path: Path
) -> None:
    hostile.listing = endless_listing
    manifest = _tree(tmp_path, hostile.url)
    lock = tmp_path / "capc.lock"
    outcome = run_lock(manifest, LockRequest(str(lock), timeout=TIMEOUT), {},
                       EgressPolicy(allow_private_networks=True))
    assert outcome.exit_code == EXIT_UNAVAILABLE
    assert outcome.err == (f"capc lock: server 'big' ({hostile.url}): listing refused: the "
                           f"tool listing is larger than {MAX_LISTING_BYTES} bytes",)
    assert not lock.exists()


async def test_client_mcp_tools_skips_a_server_whose_listing_is_too_large(
    hostile: HostileMcpServer, tmp_path: Path
) -> None:
    pytest.importorskip("langchain_mcp_adapters")
    hostile.listing = endless_listing
    path = tmp_path / "manifest.json"
    path.write_bytes(dump_manifest(_tree(tmp_path, hostile.url)))
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        toolset = await manifest.resolve(["big"], RuntimeContext(
            user_id=1, settings=StaticSettings({})))
        found = await toolset.client_mcp_tools(timeout=TIMEOUT)
    assert found.tools == []
    assert [(skip.server_label, skip.tool, skip.reason) for skip in found.skipped] == [
        ("big", "*", "the server could not be listed (the tool listing is larger than "
                     f"{MAX_LISTING_BYTES} bytes)")]
