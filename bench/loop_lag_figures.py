"""Figure 19: how long a 1 MiB reply blocks the event loop, with and without shaping.

A reply is masked, parsed, selected, cut and masked again before the model sees it. Done
on the event loop, that work stalls every other task of the agent for as long as it
takes; capc does it on a worker thread above a size threshold, so the loop only waits for
the longest single step that holds the interpreter lock. Measured here: a ticker task on
the same loop as the call wakes every millisecond and records how late it woke; the
largest delay during a call is that call's loop lag. The baseline is parsing the reply
once (``json.loads``), the least any consumer of the reply does. Reported per shaping
option: lag / parse-once (goal: a small multiple), and the call's latency with all
shaping against the same call without.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.response_figures import json_server, search_reply
from bench.runtime_figures import compile_to_file
from bench.timing import Figure, ratio_figure
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest

MIB = 1 << 20
# How late the loop may run a ready task, as a multiple of parsing the reply once.
GOAL_LAG_RATIO = 4.0
TICK = 0.001
_SELECT = "results[].{title: title, url: url, snippet: snippet, tags: tags}"
SHAPES: dict[str, str] = {
    "none": "",
    "select": f'    select: "{_SELECT}"\n',
    "max_items": "    max_items: 10\n",
    "max_chars": "    max_chars: 20000\n",
    "all": f'    select: "{_SELECT}"\n    max_items: 10\n    max_chars: 20000\n',
}
_CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: api
options:
  description: Search the web
  url: http://127.0.0.1:{port}/search
  max_response_bytes: 4194304
  headers:
    Authorization: Bearer ${{SEARCH_TOKEN}}
{response}"""


def one_mib_reply() -> bytes:
    """A search reply of about 1 MiB (realistic records, not one long string)."""
    results = 200
    body = search_reply(results)
    while len(body) < MIB:
        results = int(results * MIB / len(body)) + 1
        body = search_reply(results)
    return body


def loop_lag_figures(work: Path, runs: int) -> list[Figure]:
    """Figures 19a-19f: loop lag per shaping option vs parsing once; shaping's latency."""
    body = one_mib_reply()
    with json_server(body) as port:
        tree = work / "loop-lag-tree"
        tree.mkdir(parents=True, exist_ok=True)
        for code, response in SHAPES.items():
            shaping = f"  response:\n{response}" if response else ""
            (tree / f"{code}.yaml").write_text(
                _CAPABILITY.format(code=code, port=port, response=shaping), encoding="utf-8")
        manifest = compile_to_file(tree, work / "loop-lag.json", allow_private=True)
        lags, latencies, parse_once = asyncio.run(_measure(manifest, body, runs))
    figures = [
        ratio_figure(f"19{letter}", f"loop lag, 1 MiB reply, shaping {code} vs parsing it once",
                     lags[code], parse_once, goal_ratio=GOAL_LAG_RATIO)
        for letter, code in zip("abcde", SHAPES, strict=True)
    ]
    figures.append(ratio_figure(
        "19f", "1 MiB api call latency: select + max_items + max_chars vs no shaping",
        latencies["all"], latencies["none"], goal_ratio=None))
    return figures


def _timed_parse(body: bytes) -> float:
    started = time.perf_counter()
    json.loads(body)
    return time.perf_counter() - started


async def _measure(manifest_path: Path, body: bytes, runs: int
                   ) -> tuple[dict[str, float], dict[str, float], float]:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"SEARCH_TOKEN": "tok-9f8e7d6c5b"}))
    toolset = await manifest.resolve(list(SHAPES), ctx)
    tools = {tool.name: tool for tool in toolset.tools}
    lags: dict[str, list[float]] = {code: [] for code in SHAPES}
    latencies: dict[str, list[float]] = {code: [] for code in SHAPES}
    for code in SHAPES:
        await tools[code].ainvoke({})  # warm: connection, jmespath, secret patterns
    parses: list[float] = []
    for _ in range(runs):
        # Interleaved, the baseline too, so a neighbour's load touches every figure alike.
        for code in SHAPES:
            parses.append(_timed_parse(body))
            lag, latency = await _one_call(tools[code])
            lags[code].append(lag)
            latencies[code].append(latency)
    await manifest.aclose()
    return ({code: statistics.median(found) for code, found in lags.items()},
            {code: statistics.median(found) for code, found in latencies.items()},
            statistics.median(parses))


async def _one_call(tool: Any) -> tuple[float, float]:
    """The largest delay of a 1 ms ticker on this loop during one call, and the call's time."""
    finished = asyncio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        while not finished.is_set():
            before = time.perf_counter()
            await asyncio.sleep(TICK)
            worst = max(worst, time.perf_counter() - before - TICK)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = time.perf_counter()
    await tool.ainvoke({})
    latency = time.perf_counter() - started
    finished.set()
    await ticking
    return worst, latency


if __name__ == "__main__":
    import tempfile

    from bench.timing import format_table

    with tempfile.TemporaryDirectory(prefix="capc-bench-") as temporary:
        print(format_table(loop_lag_figures(Path(temporary), 5)))
