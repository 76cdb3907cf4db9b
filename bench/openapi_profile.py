"""Where ``capc import openapi --all`` spends its time, stage by stage, in one process.

    python -m bench.openapi_profile DOCUMENT [--server URL] [--cprofile OUT] [--top 25]

Imports every operation of DOCUMENT into a fresh temporary project (as the CLI does,
without the CLI) and prints the wall and CPU time of each stage: parse (read, validate,
convert), map (operations to capability data), render (data to YAML text), compile-check
(the one compile of the tree as it would be) and write, with the process's peak RSS.
``--cprofile OUT`` also writes a cProfile of the whole import to OUT and prints its
``--top`` functions by own time. The stages are timed by wrapping the import module's
functions of those names, so the split follows the code, not a copy of it.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
# Stage name -> the names in compiler.authoring.openapi.import_openapi it wraps.
STAGES = {"parse": ("read_openapi",), "map": ("generate",), "render": ("render_tool",),
          "compile-check": ("_compile_errors",), "write": ("_write",)}


def _timed(function: Callable[..., Any], totals: dict[str, list[float]],
           stage: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[stage][0] += time.perf_counter() - wall
            totals[stage][1] += time.process_time() - cpu
    return wrapper


def profile_import(document: Path, server: str | None = None,
                   cprofile: Path | None = None) -> tuple[dict[str, list[float]], float, int]:
    """Import ``document`` whole into a temporary project: per-stage [wall, cpu] seconds,
    the total wall seconds and the exit code."""
    sys.path.insert(0, str(REPOSITORY))
    from compiler.authoring.openapi import import_openapi as module

    totals = {stage: [0.0, 0.0] for stage in STAGES}
    for stage, names in STAGES.items():
        for name in names:
            if hasattr(module, name):
                setattr(module, name, _timed(getattr(module, name), totals, stage))
    project = Path(tempfile.mkdtemp(prefix="capc-openapi-profile-"))
    (project / "pyproject.toml").write_text('[tool.capc]\nroots = ["capabilities"]\n')
    os.environ["CAPC_NO_CACHE"] = "1"
    os.chdir(project)
    request = module.OpenApiRequest(str(document), "capabilities/api", take_all=True,
                                    server=server)
    profiler = None
    if cprofile is not None:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    outcome = module.run_import(request)
    total = time.perf_counter() - started
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(cprofile))
    return totals, total, outcome.exit_code


def main(argv: list[str] | None = None) -> int:
    """Print the stage split (and the cProfile's top functions)."""
    parser = argparse.ArgumentParser(prog="python -m bench.openapi_profile")
    parser.add_argument("document", type=Path)
    parser.add_argument("--server", default=None)
    parser.add_argument("--cprofile", type=Path, default=None)
    parser.add_argument("--top", type=int, default=25)
    arguments = parser.parse_args(argv)
    totals, total, code = profile_import(arguments.document.resolve(), arguments.server,
                                         arguments.cprofile)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{arguments.document.name}: exit {code}, {total:.2f} s wall, peak RSS {peak:.0f} MiB")
    rest = total - sum(wall for wall, _ in totals.values())
    for stage, (wall, cpu) in totals.items():
        print(f"  {stage:14} {wall:8.2f} s wall {cpu:8.2f} s CPU {wall / total:6.1%}")
    print(f"  {'other':14} {rest:8.2f} s wall")
    if arguments.cprofile is not None:
        import pstats

        pstats.Stats(str(arguments.cprofile)).sort_stats("tottime").print_stats(arguments.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
