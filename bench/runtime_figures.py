"""Figures 4, 5 and 6: the runtime loader and api tools, measured in this process.

These use the public API of ``compiler.runtime`` only (load_manifest, Manifest.resolve,
RuntimeContext, StaticSettings, ToolRegistry), as an agent process would.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from langchain_core.tools import StructuredTool

from bench.timing import REPOSITORY, Figure, median_pair, ratio_figure, timed
from compiler.build import build
from compiler.pipeline import CompileOptions
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.manifest.format import dump_manifest

RESOLVED_CODES = 50
RESOLVE_GOAL_SECONDS = 0.025
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def compile_to_file(root: Path, output: Path, *, allow_private: bool = False) -> Path:
    """Compile ``root`` in this process (no cache) and write its manifest to ``output``."""
    options = CompileOptions(allow_private_networks=allow_private)
    result = build([str(root)], options=options, cwd=root.parent, use_cache=False)
    if result.manifest is None:
        raise RuntimeError(f"the benchmark tree {root} does not compile: "
                           f"{[d for d in result.diagnostics if d.is_error][:3]}")
    output.write_bytes(dump_manifest(result.manifest))
    return output


def load_figure(manifest_path: Path, files: int, runs: int) -> Figure:
    """Figure 4: load_manifest vs the least any loader does (json.loads + sha256)."""
    raw = manifest_path.read_bytes()

    def baseline() -> float:
        return timed(lambda: (json.loads(manifest_path.read_bytes()),
                              hashlib.sha256(raw).hexdigest()))

    def measured() -> float:
        return timed(lambda: load_manifest(manifest_path, registry=ToolRegistry()))

    seconds, floor = median_pair(measured, baseline, runs)
    return ratio_figure("4", f"load_manifest ({files}-file manifest) vs json.loads+sha256",
                        seconds, floor, goal_ratio=2.0,
                        reason="the manifest took the strict path (json module, eager "
                               "entries): is orjson installed? does it hold floats below 1e-4?")


def _api_codes(manifest_path: Path, count: int) -> list[str]:
    data = json.loads(manifest_path.read_bytes())
    codes = [entry["code"] for entry in data["capabilities"] if entry["type"] == "api"]
    return codes[:: max(1, len(codes) // count)][:count]


def _settings_for(manifest_path: Path) -> StaticSettings:
    names = set(_PLACEHOLDER.findall(manifest_path.read_text("utf-8")))
    return StaticSettings({name: f"token-{name.lower()}" for name in names})


def _first_resolve_seconds(manifest_path: Path, runs: int) -> float:
    """Median time of the first resolve of 50 api codes on a freshly loaded manifest
    (what an agent's boot pays; later resolves reuse the per-manifest blueprints)."""
    codes = _api_codes(manifest_path, RESOLVED_CODES)
    settings = _settings_for(manifest_path)

    async def once() -> float:
        manifest = load_manifest(manifest_path, registry=ToolRegistry())
        context = RuntimeContext(user_id=1, group_id=1, chat_id=1, settings=settings)
        start = time.perf_counter()
        toolset = await manifest.resolve(codes, context)
        elapsed = time.perf_counter() - start
        await manifest.aclose()
        if len(toolset.tools) != len(codes):
            raise RuntimeError(f"resolve built {len(toolset.tools)} of {len(codes)} tools: "
                               f"{toolset.skipped[:3]}")
        return elapsed

    return statistics.median(asyncio.run(once()) for _ in range(runs))


def resolve_figure(large: Path, small: Path, files: int, small_files: int, runs: int) -> Figure:
    """Figure 5: resolve 50 api codes from the N-file manifest; the baseline is the same
    from a small manifest, so a ratio near 1 shows the cost follows the request, not N."""
    _first_resolve_seconds(small, 1)  # imports LangChain and pydantic: boot, not resolve
    seconds = _first_resolve_seconds(large, runs)
    floor = _first_resolve_seconds(small, runs)
    figure = ratio_figure(
        "5", f"resolve {RESOLVED_CODES} api codes: {files}-file vs {small_files}-file manifest",
        seconds, floor, goal_ratio=1.5, goal=f"<= {RESOLVE_GOAL_SECONDS * 1e3:g} ms, ~1x")
    met = seconds <= RESOLVE_GOAL_SECONDS and figure.goal_met is True
    reason = ("" if met else
              f"{seconds * 1e3:.0f} ms: each first resolve declares a pydantic argument "
              "model (validators deferred) and a StructuredTool per api tool"
              if seconds > RESOLVE_GOAL_SECONDS else
              "cost grows with the manifest size")
    return Figure(figure.number, figure.title, seconds, floor, "s", figure.ratio, figure.goal,
                  met, reason)


@contextmanager
def loopback_server() -> Iterator[int]:
    """A keep-alive HTTP server in a child process; yields its port."""
    process = subprocess.Popen([sys.executable, "-m", "bench.loopback_server"],
                               cwd=REPOSITORY, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


_TOOL_CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: search_items
name: Search items
type: api
options:
  description: Search the items of the loopback service
  method: GET
  url: http://127.0.0.1:{port}/v1/items
  params:
    query: {{type: string, description: What to look for, required: true}}
    limit: {{type: integer, description: How many, required: false, default: 10}}
  headers:
    Authorization: Bearer ${{ITEMS_TOKEN}}
"""


async def _sequential(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - start) / calls


async def _throughput(call: Callable[[], Awaitable[Any]], calls: int, concurrency: int
                      ) -> float:
    """Calls per second with ``concurrency`` calls in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return calls / (time.perf_counter() - start)


def tool_call_figures(work: Path, runs: int, calls: int = 300) -> list[Figure]:
    """Figure 6: an api tool call vs a raw pooled httpx request (latency), and vs the
    reference's client-per-call pattern (throughput with 10 calls in flight)."""
    with loopback_server() as port:
        tree = work / "tool-call-tree"
        tree.mkdir(parents=True, exist_ok=True)
        (tree / "search.yaml").write_text(_TOOL_CAPABILITY.format(port=port), encoding="utf-8")
        manifest_path = compile_to_file(tree, work / "tool-call.json", allow_private=True)
        return asyncio.run(_tool_call_rounds(manifest_path, port, runs, calls))


async def _tool_call_rounds(manifest_path: Path, port: int, runs: int, calls: int
                            ) -> list[Figure]:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(),
                             allow_private_networks=True)
    context = RuntimeContext(user_id=1, group_id=1, chat_id=1,
                             settings=StaticSettings({"ITEMS_TOKEN": "secret"}))
    toolset = await manifest.resolve(["search_items"], context)
    tool = toolset.tools[0]
    url = f"http://127.0.0.1:{port}/v1/items"
    arguments: dict[str, str | int] = {"query": "open invoices", "limit": 5}
    headers = {"Authorization": "Bearer secret"}
    answer = await tool.ainvoke(arguments)
    if not str(answer).startswith('{"items"'):
        raise RuntimeError(f"the benchmark tool call failed: {answer!r}")

    async with httpx.AsyncClient(timeout=15.0) as pooled:
        async def raw_call() -> None:
            response = await pooled.get(url, params=arguments, headers=headers)
            response.raise_for_status()

        async def tool_call() -> None:
            await tool.ainvoke(arguments)

        async def client_per_call() -> None:
            async with httpx.AsyncClient(timeout=15.0) as client:
                response = await client.get(url, params=arguments, headers=headers)
                response.raise_for_status()

        async def search(query: str, limit: int = 10) -> str:
            """Search the items of the loopback service."""
            response = await pooled.get(url, params={"query": query, "limit": limit},
                                        headers=headers)
            response.raise_for_status()
            return response.text

        # The least any LangChain tool costs: the raw request behind StructuredTool.
        wrapped = StructuredTool.from_function(coroutine=search, name="search_items")

        async def wrapped_call() -> None:
            await wrapped.ainvoke(arguments)

        latencies = [(await _sequential(tool_call, calls), await _sequential(raw_call, calls),
                      await _sequential(wrapped_call, calls)) for _ in range(runs)]
        throughputs = [(await _throughput(tool_call, calls, 10),
                        await _throughput(client_per_call, calls, 10)) for _ in range(runs)]
    await manifest.aclose()
    tool_latency = statistics.median(pair[0] for pair in latencies)
    raw_latency = statistics.median(pair[1] for pair in latencies)
    wrapped_latency = statistics.median(pair[2] for pair in latencies)
    tool_rate = statistics.median(pair[0] for pair in throughputs)
    reference_rate = statistics.median(pair[1] for pair in throughputs)
    own = (tool_latency - wrapped_latency) * 1e6
    latency = ratio_figure("6a", "api tool call vs raw pooled httpx request (latency)",
                           tool_latency, raw_latency, goal_ratio=1.3,
                           reason=f"a plain StructuredTool around the same request is already "
                                  f"{wrapped_latency / raw_latency:.2f}x (6c): LangChain's tool "
                                  f"machinery; capc's own work adds {own:+.0f} µs per call")
    rate_ratio = tool_rate / reference_rate
    throughput = Figure("6b", "api tool calls/s vs client-per-call (reference)", tool_rate,
                        reference_rate, "calls/s", rate_ratio, ">= 2x", rate_ratio >= 2.0,
                        "" if rate_ratio >= 2.0 else "connection reuse saves less than the "
                        "tool's own per-call work costs")
    langchain = ratio_figure("6c", "raw request inside a plain StructuredTool vs raw request",
                             wrapped_latency, raw_latency, goal_ratio=None)
    return [latency, throughput, langchain]

