"""Figures 13a-13c (SPEC §13, issue 25): hot reload and tracing, as ratios in one run.

- 13a: a reload of the benchmark's large signed manifest by ``watch_manifest`` (read,
  verify, build, swap; driven by ``check_now``) vs ``load_manifest`` of it with the same
  keys, alternating, median of the per-pair ratios.
- 13b: the api tool calls of one agent run (one lease) while 100 reloads happen vs the
  same calls with no reload: median call latency; any failed call misses the goal.
- 13c: an api tool call with ``opentelemetry-api`` installed and its default no-op
  provider vs the same call with the tracing hooks switched off.
- 13d (information): the first resolve and call on a manifest just swapped in vs warm.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
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
        figures.extend(asyncio.run(_calls_during_reloads(_signed_versions(small, folder, key),
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
                                runs: int, folder: Path, calls: int = 400) -> list[Figure]:
    """13b: calls of an agent run (one lease) while 100 reloads happen, vs with none.

    13d (information): the first resolve and call on a freshly swapped-in manifest (its
    argument models built, a new connection opened) vs the same on a warm one.
    """
    folder.mkdir(exist_ok=True)
    manifest = folder / "manifest.json"
    _publish(manifest, versions[0])
    digests = [json.loads(raw)["digest"] for raw, _ in versions]
    context = RuntimeContext(user_id=1, settings=SETTINGS)
    arguments = {"query": "open", "limit": 5}
    failures: list[str] = []
    quiet: list[float] = []
    busy: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    async with watch_manifest(manifest, trusted_keys=[key.public_key.text],
                              registry=ToolRegistry(), allow_private_networks=True,
                              interval=3600, events=False) as watcher:
        def other_version() -> tuple[bytes, bytes]:
            return versions[1] if watcher.manifest.digest == digests[0] else versions[0]

        async def timed_call(tool: Any) -> float:
            start = time.perf_counter()
            answer = str(await tool.ainvoke(arguments))
            if not answer.startswith('{"items"'):
                failures.append(answer)
            return time.perf_counter() - start

        async def run(reloading: bool) -> list[float]:
            done = asyncio.Event()

            async def reloader() -> None:
                for _ in range(RELOADS):
                    # The kubelet writes from another process: the renames (milliseconds on
                    # some file systems) must not run on the agent's event loop.
                    await asyncio.to_thread(_publish, manifest, other_version())
                    await watcher.check_now()
                done.set()

            async with watcher.lease() as current:
                tool = (await current.resolve(["search_items"], context)).tools[0]
                await timed_call(tool)  # the run's connection is open before timing
                if not reloading:
                    return [await timed_call(tool) for _ in range(calls)]
                task = asyncio.create_task(reloader())
                latencies = []
                while not done.is_set():  # only calls made while reloads were happening
                    latencies.append(await timed_call(tool))
                await task
                return latencies

        async def resolve_and_call() -> float:
            start = time.perf_counter()
            await timed_call((await watcher.resolve(["search_items"], context)).tools[0])
            return time.perf_counter() - start

        await run(False)  # warm up: imports, the first pool
        for _ in range(runs):
            quiet.extend(await run(False))
            busy.extend(await run(True))
            warm.append(await resolve_and_call())
            _publish(manifest, other_version())
            await watcher.check_now()
            cold.append(await resolve_and_call())
        reloaded = watcher.status.reloads_accepted
    expected = (RELOADS + 1) * runs
    # The mean, not the median: every reload's cost on the loop lands in some call's time.
    figure = ratio_figure(
        "13b", f"api tool call during {RELOADS} back-to-back reloads vs none (mean, one lease)",
        statistics.fmean(busy), statistics.fmean(quiet), goal_ratio=1.1,
        reason="reloads slow the calls that run beside them")
    met = figure.goal_met and not failures and reloaded == expected
    reason = (f"{len(failures)} calls failed" if failures else
              f"{reloaded} of {expected} reloads accepted" if reloaded != expected
              else figure.reason)
    during = Figure(figure.number, figure.title, figure.measured, figure.baseline, "s",
                    figure.ratio, figure.goal, met, "" if met else reason)
    first = ratio_figure(
        "13d", "first resolve+call on a new manifest vs on a warm one (argument models, "
        "connection)", statistics.median(cold), statistics.median(warm), goal_ratio=None)
    return [during, first]


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

    HOOKS = ((loader_module, "traced", lambda client: client),
             (telemetry, "_trace_api", lambda: None))

    def __enter__(self) -> None:
        self._saved = [(module, name, getattr(module, name)) for module, name, _ in self.HOOKS]
        for module, name, replacement in self.HOOKS:
            setattr(module, name, replacement)

    def __exit__(self, *exc_info: object) -> None:
        for module, name, original in self._saved:
            setattr(module, name, original)


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
