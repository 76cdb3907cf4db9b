"""Figures 15a-15b (SPEC §15, issue 32): ``capc serve``'s start-up, as ratios in one run.

- 15a: ``capc serve`` of a 500-tool profile, from the process start to the first answered
  ``tools/list``, vs a process that only runs ``load_manifest`` of the same manifest
  (interpreter start included on both sides); the goal is the absolute figure, <= 1 s on
  a quiet machine, and the ratio is reported beside it.
- 15b (information): in this process, ``create_app`` plus the first ``tools/list``
  through the ASGI app vs ``load_manifest`` alone.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from bench.runtime_figures import compile_to_file
from bench.timing import REPOSITORY, Figure, median_pair, ratio_figure, timed
from compiler.runtime import ToolRegistry, load_manifest

TOOLS = 500
PROFILE = "all-tools"
START_GOAL_SECONDS = 1.0
_CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: lookup_{index:03d}
name: Lookup {index}
type: api
options:
  description: Look up item kind {index} in the catalogue service
  url: https://catalogue.example.com/v1/kinds/{index}/items
  params:
    query: {{type: string, description: What to look for, required: true}}
    limit: {{type: integer, description: How many, required: false, default: 10}}
"""
# Deferred (offered through tool search), as a 500-tool profile must be for OpenAI: capc
# serve lists deferred tools too, so the listing still has all 500.
_PROFILE = f"""\
apiVersion: capc/v1
kind: Profile
name: {PROFILE}
capabilities: ["lookup_*"]
deferred: ["lookup_*"]
"""
_LISTENING = re.compile(r"running on (http://[\d.]+:\d+)")


def serve_figures(work: Path, runs: int) -> list[Figure]:
    """15a and 15b on a freshly compiled 500-tool manifest."""
    tree = work / "serve" / "capabilities"
    tree.mkdir(parents=True, exist_ok=True)
    for index in range(TOOLS):
        (tree / f"lookup_{index:03d}.yaml").write_text(_CAPABILITY.format(index=index),
                                                       encoding="utf-8")
    (tree / "profile.yaml").write_text(_PROFILE, encoding="utf-8")
    manifest = compile_to_file(tree, work / "serve" / "manifest.json")
    served, loaded = median_pair(lambda: _serve_to_first_listing(manifest),
                                 lambda: _load_in_a_process(manifest), runs)
    met = served <= START_GOAL_SECONDS
    start = Figure("15a", f"capc serve to first tools/list, {TOOLS} tools, vs load_manifest "
                   "(processes)", served, loaded, "s", served / loaded,
                   f"<= {START_GOAL_SECONDS:g} s", met,
                   "" if met else f"{served:.2f} s on this machine")
    in_process, load_only = median_pair(lambda: timed(lambda: asyncio.run(
        _app_to_first_listing(manifest))), lambda: timed(lambda: load_manifest(
            manifest, registry=ToolRegistry())), runs)
    return [start, ratio_figure("15b", f"create_app + first tools/list vs load_manifest, "
                                f"{TOOLS} tools (in process)", in_process, load_only,
                                goal_ratio=None)]


def _serve_to_first_listing(manifest: Path) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "compiler", "serve", str(manifest), "--profile", PROFILE,
         "--port", "0"], cwd=REPOSITORY, stderr=subprocess.PIPE, text=True)
    try:
        url = _listening(process)
        reply = httpx.post(f"{url}/mcp/{PROFILE}", timeout=60, headers={
            "content-type": "application/json", "accept": "application/json"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        elapsed = time.perf_counter() - started
        if len(reply.json()["result"]["tools"]) != TOOLS:
            raise RuntimeError("capc serve did not list every tool of the benchmark")
        return elapsed
    finally:
        process.terminate()
        process.wait(timeout=60)


def _listening(process: subprocess.Popen[str]) -> str:
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = _LISTENING.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()
    threading.Thread(target=read, daemon=True).start()
    ready.wait(120)
    if not found:
        raise RuntimeError("capc serve did not start listening")
    return found[0]


def _load_in_a_process(manifest: Path) -> float:
    code = ("import sys; from compiler.runtime import load_manifest; "
            "load_manifest(sys.argv[1])")
    return timed(lambda: subprocess.run([sys.executable, "-c", code, str(manifest)],
                                        cwd=REPOSITORY, check=True))


async def _app_to_first_listing(manifest: Path) -> None:
    from compiler.runtime import create_app

    app = create_app(manifest, profiles=[PROFILE], registry=ToolRegistry(),
                     allowed_hosts=None)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://capc") as client:
        reply = await client.post(f"/mcp/{PROFILE}", headers={
            "content-type": "application/json", "accept": "application/json"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    if len(reply.json()["result"]["tools"]) != TOOLS:
        raise RuntimeError("the app did not list every tool of the benchmark")
