"""Figures 13a-13c (SPEC §13, issue 25): hot reload and tracing, as ratios in one run.

- 13a: a reload of the benchmark's large signed manifest by ``watch_manifest`` (read,
  verify, build, swap; driven by ``check_now``) vs ``load_manifest`` of it with the same
  keys, alternating, median of the per-pair ratios.
- 13b: api tool calls (lease, resolve, call) running while 100 reloads happen vs the same
  calls with no reload: median call latency; any failed call misses the goal.
- 13c: an api tool call with ``opentelemetry-api`` installed and its default no-op
  provider vs the same call with the tracing hooks switched off.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import compiler.runtime.loader as loader_module
import compiler.runtime.telemetry as telemetry
from bench.runtime_figures import _TOOL_CAPABILITY, compile_to_file, loopback_server
from bench.timing import Figure, ratio_figure, timed
from compiler.runtime import (
    RuntimeContext,
    StaticSettings,
    ToolRegistry,
    load_manifest,
    watch_manifest,
)
from compiler.runtime.manifest.format import compute_digest
from compiler.runtime.manifest.read import read_verified_document
from compiler.signing import SigningKey, create_key_file, load_signing_key

RELOADS = 100
MIN_PAIRS = 15
SETTINGS = StaticSettings({"ITEMS_TOKEN": "secret"})


def fleet_figures(manifest: Path, files: int, work: Path, runs: int) -> list[Figure]:
    """13a for ``manifest`` (``files`` capabilities), 13b and 13c on a loopback service."""
    folder = work / "fleet"
    folder.mkdir(parents=True, exist_ok=True)
    key = _key(folder / "fleet-key.pem")
    versions = _signed_versions(manifest, folder, key)
    figures = [asyncio.run(_reload_figure(versions, key, files, max(runs * 3, MIN_PAIRS),
                                          folder / "reload"))]
    with loopback_server() as port:
        tree = folder / "tool-tree"
        tree.mkdir(exist_ok=True)
        (tree / "search.yaml").write_text(_TOOL_CAPABILITY.format(port=port), encoding="utf-8")
        small = compile_to_file(tree, folder / "tool.json", allow_private=True)
        figures.append(asyncio.run(_calls_during_reloads(_signed_versions(small, folder, key),
                                                         key, runs, folder / "calls")))
        figures.append(asyncio.run(_tracing_figure(small, runs)))
    return figures


def _key(path: Path) -> SigningKey:
    path.unlink(missing_ok=True)
    create_key_file(path)
    key = load_signing_key(str(path), {})
    assert key is not None
    return key


def _signed_versions(manifest: Path, folder: Path, key: SigningKey) -> list[tuple[bytes, bytes]]:
    """Two versions of ``manifest`` (different digests, same content) and their signatures."""
    versions = []
    for suffix in ("a", "b"):
        document = read_verified_document(manifest)
        document["compiler"] = {**document["compiler"], "build": f"fleet-bench-{suffix}"}
        document["digest"] = compute_digest(document)
        raw = (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
        versions.append((raw, key.sign(document["digest"]).to_bytes()))
    return versions


def _publish(path: Path, version: tuple[bytes, bytes]) -> None:
    """Signature first, then the manifest, each by an atomic rename."""
    for target, content in ((Path(f"{path}.sig"), version[1]), (path, version[0])):
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_bytes(content)
        os.replace(temporary, target)


async def _reload_figure(versions: list[tuple[bytes, bytes]], key: SigningKey, files: int,
                         pairs: int, folder: Path) -> Figure:
    folder.mkdir(exist_ok=True)
    manifest = folder / "manifest.json"
    _publish(manifest, versions[0])
    trusted = [key.public_key.text]
    ratios, reloads, loads = [], [], []
    async with watch_manifest(manifest, trusted_keys=trusted, registry=ToolRegistry(),
                              interval=3600, events=False) as watcher:
        for number in range(pairs):
            loads.append(timed(lambda: load_manifest(manifest, registry=ToolRegistry(),
                                                     trusted_keys=trusted)))
            _publish(manifest, versions[(number + 1) % 2])
            start = time.perf_counter()
            outcome = await watcher.check_now()
            reloads.append(time.perf_counter() - start)
            if outcome != "accepted":
                raise RuntimeError(f"the benchmark reload was {outcome}: "
                                   f"{watcher.status.last_rejection}")
            ratios.append(reloads[-1] / loads[-1])
    ratio = statistics.median(ratios)
    figure = ratio_figure(
        "13a", f"reload of a signed {files}-file manifest vs load_manifest with the keys",
        statistics.median(reloads), statistics.median(loads), goal_ratio=1.2,
        reason="the reload does more than load_manifest: look at the worker hand-off")
    return Figure(figure.number, figure.title, figure.measured, figure.baseline, "s", ratio,
                  figure.goal, ratio <= 1.2, figure.reason if ratio > 1.2 else "")


async def _calls_during_reloads(versions: list[tuple[bytes, bytes]], key: SigningKey,
                                runs: int, folder: Path, calls: int = 400) -> Figure:
    folder.mkdir(exist_ok=True)
    manifest = folder / "manifest.json"
    _publish(manifest, versions[0])
    context = RuntimeContext(user_id=1, settings=SETTINGS)
    failures: list[str] = []
    quiet: list[float] = []
    busy: list[float] = []
    async with watch_manifest(manifest, trusted_keys=[key.public_key.text],
                              registry=ToolRegistry(), allow_private_networks=True,
                              interval=3600, events=False) as watcher:
        async def one_call() -> float:
            start = time.perf_counter()
            async with watcher.lease() as current:
                toolset = await current.resolve(["search_items"], context)
                answer = str(await toolset.tools[0].ainvoke({"query": "open", "limit": 5}))
            if not answer.startswith('{"items"'):
                failures.append(answer)
            return time.perf_counter() - start

        async def calls_with(reloading: bool) -> list[float]:
            done = asyncio.Event()

            async def reloader() -> None:
                for number in range(RELOADS):
                    _publish(manifest, versions[(number + 1) % 2])
                    await watcher.check_now()
                    await asyncio.sleep(0)
                done.set()

            if not reloading:
                return [await one_call() for _ in range(calls)]
            task = asyncio.create_task(reloader())
            latencies = []
            while not done.is_set():  # only calls that ran while reloads were happening
                latencies.append(await one_call())
            await task
            return latencies

        await calls_with(False)  # warm up: pools, imports
        for _ in range(runs):
            quiet.extend(await calls_with(False))
            busy.extend(await calls_with(True))
        reloaded = watcher.status.reloads_accepted
    figure = ratio_figure(
        "13b", f"api tool call during {RELOADS} reloads vs with none (median latency)",
        statistics.median(busy), statistics.median(quiet), goal_ratio=1.1,
        reason="reloads slow the calls that run beside them")
    met = figure.goal_met and not failures and reloaded == RELOADS * runs
    reason = (f"{len(failures)} calls failed" if failures else
              f"{reloaded} of {RELOADS * runs} reloads accepted"
              if reloaded != RELOADS * runs else figure.reason)
    return Figure(figure.number, figure.title, figure.measured, figure.baseline, "s",
                  figure.ratio, figure.goal, met, "" if met else reason)


async def _tracing_figure(manifest_path: Path, runs: int, calls: int = 300) -> Figure:
    if not telemetry.otel_installed():
        return Figure("13c", "api tool call with OpenTelemetry (no-op provider) vs without",
                      0.0, 0.0, "s", 0.0, "<= 1.05x", None, "")
    manifest = load_manifest(manifest_path, registry=ToolRegistry(), allow_private_networks=True)
    context = RuntimeContext(user_id=1, settings=SETTINGS)
    traced_tool = (await manifest.resolve(["search_items"], context)).tools[0]
    with _tracing_off():
        plain_tool = (await manifest.resolve(["search_items"], context)).tools[0]
    arguments = {"query": "open", "limit": 5}

    async def batch(tool: Any) -> float:
        start = time.perf_counter()
        for _ in range(calls):
            await tool.ainvoke(arguments)
        return (time.perf_counter() - start) / calls

    await batch(traced_tool)
    ratios, traced, plain = [], [], []
    for _ in range(max(runs * 2, 8)):
        with _tracing_off():
            plain.append(await batch(plain_tool))
        traced.append(await batch(traced_tool))
        ratios.append(traced[-1] / plain[-1])
    await manifest.aclose()
    ratio = statistics.median(ratios)
    return Figure("13c", "api tool call with OpenTelemetry (no-op provider) vs without",
                  statistics.median(traced), statistics.median(plain), "s", ratio, "<= 1.05x",
                  ratio <= 1.05, "" if ratio <= 1.05 else "the tracing hooks cost too much")


class _tracing_off:
    """Build and call tools as if ``opentelemetry-api`` were not installed."""

    def __enter__(self) -> None:
        self._saved: tuple[Callable[..., Any], Callable[..., Any]] = (
            loader_module.traced, telemetry._trace_api)
        loader_module.traced = lambda client: client  # type: ignore[assignment]
        telemetry._trace_api = lambda: None  # type: ignore[assignment]

    def __exit__(self, *exc_info: object) -> None:
        loader_module.traced, telemetry._trace_api = self._saved  # type: ignore[assignment]


def main() -> None:
    """``python -m bench.fleet_figures``: these figures alone, on the default corpus."""
    import tempfile

    from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, write_corpus

    with tempfile.TemporaryDirectory(prefix="capc-fleet-bench-") as temporary:
        work = Path(temporary)
        corpus = write_corpus(work / "capabilities", DEFAULT_FILES, DEFAULT_SEED)
        manifest = compile_to_file(corpus.root, work / "bench-manifest.json")
        for figure in fleet_figures(manifest, DEFAULT_FILES, work, runs=5):
            print(f"{figure.number}: {figure.title}: {figure.ratio:.3f}x "
                  f"({figure.measured * 1e3:.3f} ms vs {figure.baseline * 1e3:.3f} ms; "
                  f"goal {figure.goal}) {figure.verdict()}", flush=True)


if __name__ == "__main__":
    main()
