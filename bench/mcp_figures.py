"""Figure 9: ``Toolset.client_mcp_tools()`` boot vs langchain-mcp-adapters' own ``get_tools()``.

Both list the same pinned loopback MCP server (the tests' FastMCP server, streamable HTTP,
on 127.0.0.1) and build LangChain tools. capc does more on top: it computes every live
descriptor's digest and compares it with the pin, filters by ``allowed_tools`` and wraps
gated or overridden tools; the figure says what that costs, as a ratio.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from bench.timing import Figure, ratio_figure
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.pins.lock_command import LockRequest, run_lock
from compiler.pins.lockfile import read_lock
from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
from compiler.runtime.egress.addresses import EgressPolicy
from tests.support.mcp_server import running_mcp_server

_CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: calc
name: Calculator
type: mcp
options:
  server_label: calc
  server_url: {url}
  require_approval: never
"""
BOOTS_PER_RUN = 10


def client_tools_figures(work: Path, runs: int) -> list[Figure]:
    """9a: against the adapters as they come; 9b: the adapters given capc's HTTP client
    (the same lazily-TLS egress transport), so the ratio is capc's own work alone."""
    with running_mcp_server() as server:
        for index in range(20):  # a realistic listing, not two tools
            server.add_tool(lambda text: text, f"tool_{index:02d}", f"Tool number {index}.")
        tree = work / "mcp-tree"
        tree.mkdir(parents=True, exist_ok=True)
        (tree / "calc.yaml").write_text(_CAPABILITY.format(url=server.url), encoding="utf-8")
        options = CompileOptions(allow_private_networks=True)
        unpinned = build([str(tree)], options=options, use_cache=False)
        assert unpinned.manifest is not None
        lock_path = work / "capc.lock"
        outcome = run_lock(unpinned.manifest, LockRequest(str(lock_path)), {},
                           EgressPolicy(allow_private_networks=True))
        if outcome.exit_code != 0:
            raise RuntimeError(f"capc lock failed: {outcome.err}")
        pins, _ = read_lock(str(lock_path))
        result = build([str(tree)], options=CompileOptions(allow_private_networks=True,
                                                           pins=pins), use_cache=False)
        assert result.manifest is not None
        manifest_path = work / "mcp-manifest.json"
        manifest_path.write_bytes(dump_manifest(result.manifest))
        capc_time, adapters_time, same_client_time = asyncio.run(
            _rounds(manifest_path, server.url, runs))
    reason = "pin checks and policy wrappers cost more than the listing"
    return [
        ratio_figure("9a", "client_mcp_tools() boot vs langchain-mcp-adapters get_tools()",
                     capc_time, adapters_time, goal_ratio=1.5, reason=reason),
        ratio_figure("9b", "client_mcp_tools() boot vs get_tools() on capc's HTTP client",
                     capc_time, same_client_time, goal_ratio=1.5, reason=reason),
    ]


async def _rounds(manifest_path: Path, url: str, runs: int) -> tuple[float, float, float]:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from compiler.runtime.egress.addresses import EgressPolicy
    from compiler.runtime.mcp.sessions import checked_client_factory

    manifest = load_manifest(manifest_path, registry=ToolRegistry(),
                             allow_private_networks=True)
    toolset = await manifest.resolve(["calc"], RuntimeContext(user_id=1))
    # The baseline connects as the adapters do by hand: the langchain provider hands out
    # no connection to a pinned server (SPEC §9), since the adapters cannot check pins.
    connections: dict[str, Any] = {"calc": {"transport": "streamable_http", "url": url}}
    factory = checked_client_factory(EgressPolicy(allow_private_networks=True))
    same_client = {name: {**connection, "httpx_client_factory": factory}
                   for name, connection in connections.items()}
    first = await toolset.client_mcp_tools()
    baseline_tools = await MultiServerMCPClient(connections).get_tools()  # type: ignore[arg-type]
    if len(first.tools) != len(baseline_tools) or first.skipped:
        raise RuntimeError("the two clients do not offer the same tools")
    capc_times, adapter_times, same_client_times = [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(BOOTS_PER_RUN):
            await toolset.client_mcp_tools()
        capc_times.append((time.perf_counter() - started) / BOOTS_PER_RUN)
        started = time.perf_counter()
        for _ in range(BOOTS_PER_RUN):
            await MultiServerMCPClient(connections).get_tools()  # type: ignore[arg-type]
        adapter_times.append((time.perf_counter() - started) / BOOTS_PER_RUN)
        started = time.perf_counter()
        for _ in range(BOOTS_PER_RUN):
            await MultiServerMCPClient(same_client).get_tools()  # type: ignore[arg-type]
        same_client_times.append((time.perf_counter() - started) / BOOTS_PER_RUN)
    await manifest.aclose()
    return (statistics.median(capc_times), statistics.median(adapter_times),
            statistics.median(same_client_times))
