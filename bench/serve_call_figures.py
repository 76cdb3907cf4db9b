"""Figures 15c/15d (issue 32): ``tools/call`` of an api tool through ``capc serve`` vs FastMCP.

Both servers serve the same operation (GET ``/items/{item_id}`` of the same loopback
upstream, ``bench.loopback_server`` in its own process) to the same client (the official
``mcp`` SDK's ``ClientSession`` over streamable HTTP), each in its own process, measured in
alternation within one run:

- 15c: p50 latency of sequential calls, capc serve / FastMCP (goal <= 1.0x);
- 15d: time per call at ``CONCURRENCY`` calls in flight, i.e. the inverse of throughput,
  capc serve / FastMCP (goal <= 1.0x: capc's throughput at least FastMCP's).

FastMCP 4 needs ``mcp>=2`` while ``langchain-mcp-adapters`` pins ``mcp<2``, so FastMCP
cannot install beside capc: the figure creates a venv of its own for it
(``.venv/share/capc-bench-fastmcp``, kept between runs) from PyPI.

    python -m bench.serve_call_figures [--runs 5] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.runtime_figures import loopback_server
from bench.timing import REPOSITORY, Figure, format_table, ratio_figure
from compiler.build import build
from compiler.pipeline import CompileOptions
from compiler.runtime.manifest.format import dump_manifest
from tests.support.served_process import free_port, serving

FASTMCP_VERSION = "4.1.6"
PEER_VENV = REPOSITORY / ".venv" / "share" / "capc-bench-fastmcp"
PEER_SCRIPT = Path(__file__).resolve().parent / "serve_fastmcp_peer.py"
CONCURRENCY = 16
WARM_UP_CALLS = 20
PROFILE = "bench-items"

_CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: get_item
name: Get item
type: api
options:
  description: Look up one item by its id
  method: GET
  url: http://127.0.0.1:{port}/items/{{item_id}}
  path_params:
    item_id: {{type: string, description: The item id}}
---
apiVersion: capc/v1
kind: Profile
name: {profile}
capabilities: [get_item]
"""


def fastmcp_python() -> Path:
    """The Python of FastMCP's own venv, created (once) from PyPI."""
    python = PEER_VENV / "bin" / "python"
    if not (PEER_VENV / f".fastmcp-{FASTMCP_VERSION}").exists():
        print(f"bench: installing fastmcp {FASTMCP_VERSION} into {PEER_VENV}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", f"fastmcp=={FASTMCP_VERSION}", "httpx"],
                       check=True)
        (PEER_VENV / f".fastmcp-{FASTMCP_VERSION}").touch()
    return python


def capc_manifest(work: Path, upstream_port: int) -> Path:
    """The api tool and its profile, compiled (loopback allowed: the upstream is local)."""
    tree = work / "serve-tree"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "get_item.yaml").write_text(
        _CAPABILITY.format(port=upstream_port, profile=PROFILE), encoding="utf-8")
    result = build([str(tree)], options=CompileOptions(allow_private_networks=True),
                   use_cache=False)
    if result.manifest is None:
        raise RuntimeError("the bench tree does not compile")
    path = work / "serve-manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    return path


@contextmanager
def both_servers(work: Path) -> Iterator[tuple[str, str]]:
    """capc serve and the FastMCP peer on the same upstream: their two endpoint URLs."""
    peer_python = fastmcp_python()
    with loopback_server() as upstream_port:
        manifest = capc_manifest(work, upstream_port)
        capc_port, peer_port = free_port(), free_port()
        capc = [str(Path(sys.executable).parent / "capc"), "serve", str(manifest),
                "--port", str(capc_port), "--allow-private-networks"]
        peer = [str(peer_python), str(PEER_SCRIPT), str(peer_port), str(upstream_port)]
        env = {**os.environ, "PYTHONPATH": ""}
        with serving(capc, capc_port, cwd=work, log=work / "capc-serve.log"), \
                serving(peer, peer_port, cwd=work, env=env, log=work / "fastmcp.log"):
            yield (f"http://127.0.0.1:{capc_port}/mcp/{PROFILE}",
                   f"http://127.0.0.1:{peer_port}/mcp")


async def _round(url: str, calls: int) -> tuple[float, float]:
    """(p50 seconds of sequential calls, seconds per call with CONCURRENCY in flight)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()

        async def one(index: int) -> None:
            result = await session.call_tool("get_item", {"item_id": str(index)})
            if result.isError:
                raise RuntimeError(f"{url}: get_item failed: {result.content}")

        for index in range(WARM_UP_CALLS):
            await one(index)
        latencies = []
        for index in range(calls):
            started = time.perf_counter()
            await one(index)
            latencies.append(time.perf_counter() - started)
        gate = asyncio.Semaphore(CONCURRENCY)

        async def gated(index: int) -> None:
            async with gate:
                await one(index)

        started = time.perf_counter()
        await asyncio.gather(*(gated(index) for index in range(2 * calls)))
        per_call = (time.perf_counter() - started) / (2 * calls)
    return statistics.median(latencies), per_call


def serve_call_figures(work: Path, runs: int, calls: int = 200) -> list[Figure]:
    """15c and 15d, each the median of ``runs`` alternated rounds."""
    capc_rounds: list[tuple[float, float]] = []
    peer_rounds: list[tuple[float, float]] = []
    with both_servers(work) as (capc_url, peer_url):
        for run in range(runs):
            order = [(capc_url, capc_rounds), (peer_url, peer_rounds)]
            for url, rounds in order if run % 2 == 0 else reversed(order):
                rounds.append(asyncio.run(_round(url, calls)))
    capc_p50 = statistics.median(latency for latency, _ in capc_rounds)
    peer_p50 = statistics.median(latency for latency, _ in peer_rounds)
    capc_per_call = statistics.median(per_call for _, per_call in capc_rounds)
    peer_per_call = statistics.median(per_call for _, per_call in peer_rounds)
    reason = "capc serve's per-call work (validation, egress, shaping) costs more"
    return [
        ratio_figure("15c", "tools/call p50 latency: capc serve vs FastMCP", capc_p50,
                     peer_p50, goal_ratio=1.0, reason=reason),
        ratio_figure("15d", f"tools/call time per call at {CONCURRENCY} in flight (1 / "
                     "throughput): capc serve vs FastMCP", capc_per_call, peer_per_call,
                     goal_ratio=1.0, reason=reason),
    ]


def main(argv: list[str] | None = None) -> int:
    """Print figures 15c and 15d and the throughput of each side."""
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m bench.serve_call_figures")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="capc-bench-serve-") as temporary:
        figures = serve_call_figures(Path(temporary), arguments.runs, arguments.calls)
    print(format_table(figures))
    throughput = figures[1]
    print(f"throughput: capc serve {1 / throughput.measured:.0f} calls/s, FastMCP "
          f"{1 / throughput.baseline:.0f} calls/s (ratio {1 / throughput.ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
