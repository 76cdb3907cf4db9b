"""``make bench``: every figure of issue 7 as a ratio against a baseline of the same run.

    python -m bench [--files 2000] [--runs 5] [--seed N] [--sizes 100,1000,10000]

Each figure is the median of ``--runs`` interleaved runs. A missed goal is printed as
``MISSED (reason)``; the exit status is 0 either way (a benchmark reports, it does not gate).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

from bench.breakdown import compile_stages, costliest, format_stages
from bench.cli_figures import (
    compile_figures,
    import_figure,
    measure_compile,
    measure_project_compile,
    project_figure,
    validate_figure,
    write_project,
)
from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, write_corpus
from bench.fleet_figures import fleet_figures
from bench.loop_lag_figures import loop_lag_figures
from bench.mcp_figures import client_tools_figures
from bench.output_coverage import coverage_figures
from bench.output_figures import output_figures
from bench.profile_figures import profile_figures
from bench.response_figures import response_figures
from bench.runtime_figures import compile_to_file, load_figure, resolve_figure, tool_call_figures
from bench.scaling import format_scaling, interpreter_start, measure_scaling
from bench.serve_call_figures import serve_call_figures
from bench.serve_figures import serve_figures
from bench.signing_figures import signature_figures
from bench.structured_figures import structured_figures
from bench.timing import Figure, format_duration, format_table
from bench.tooltest_figures import tooltest_figures

SMALL_MANIFEST_FILES = 100


def main(argv: list[str] | None = None) -> int:
    """Generate the corpus, measure every figure, print the table (and the scaling table)."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=DEFAULT_FILES, help="corpus size")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
    parser.add_argument("--sizes", default="100,1000,10000",
                        help="corpus sizes for the scaling table ('' to skip)")
    arguments = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"capc bench: {arguments.files} files, median of {arguments.runs} runs, seed "
          f"{arguments.seed}; Python {platform.python_version()} on {platform.machine()}, "
          f"{_cpu_count()} CPU(s)", flush=True)
    with tempfile.TemporaryDirectory(prefix="capc-bench-") as temporary:
        work = Path(temporary)
        figures, stages, floor = _main_figures(work, arguments.files, arguments.seed,
                                               arguments.runs)
        print()
        print(format_table(figures))
        print(f"\nwhere a cold compile's time goes ({arguments.files} files, in-process):")
        print(format_stages(stages, floor))
        sizes = [int(size) for size in arguments.sizes.split(",") if size.strip()]
        if sizes:
            print(f"\nscaling (median of {max(3, arguments.runs - 2)} runs; interpreter start "
                  f"alone: {format_duration(interpreter_start(arguments.runs), 's')}):",
                  flush=True)
            rows = measure_scaling(sizes, work, arguments.seed, max(3, arguments.runs - 2))
            print(format_scaling(rows))
    missed = [figure.number for figure in figures if figure.goal_met is False]
    print(f"\n{len(figures)} figures, {len(missed)} missed"
          + (f" ({', '.join(missed)})" if missed else "")
          + f"; bench took {time.perf_counter() - started:.0f} s")
    return 0


def _main_figures(work: Path, files: int, seed: int, runs: int
                  ) -> tuple[list[Figure], list[tuple[str, float]], float]:
    corpus = write_corpus(work / "capabilities", files, seed)
    print(f"corpus: {len(corpus.files)} files in {corpus.root}", flush=True)
    figures: list[Figure] = []

    def show(new: list[Figure]) -> None:
        for figure in new:
            print(f"  {figure.number}: {figure.title}: {figure.ratio:.2f}x "
                  f"(goal {figure.goal}) {figure.verdict()}", flush=True)
        figures.extend(new)

    times = measure_compile(corpus, work, runs)
    stages = compile_stages(corpus, runs)
    show(compile_figures(times, files, costliest(stages, times.floor)))
    project_corpus = write_corpus(work / "project" / "capabilities", files, seed)
    project = write_project(project_corpus, work / "project")
    show([project_figure(*measure_project_compile(project, work, runs))])
    show([validate_figure(corpus, work, runs)])
    manifest = compile_to_file(corpus.root, work / "bench-manifest.json")
    small_corpus = write_corpus(work / "small" / "capabilities", SMALL_MANIFEST_FILES, seed + 1)
    small = compile_to_file(small_corpus.root, work / "small-manifest.json")
    show([load_figure(manifest, files, runs)])
    show(signature_figures([("4b", manifest, files), ("4c", small, SMALL_MANIFEST_FILES)],
                           runs))
    show([resolve_figure(manifest, small, files, SMALL_MANIFEST_FILES, runs)])
    show(tool_call_figures(work, runs))
    show(response_figures(work, runs))
    show([import_figure(runs + 2)])
    show(client_tools_figures(work, runs))
    show(loop_lag_figures(work, runs))
    show(structured_figures(runs))
    show(output_figures(work, runs))
    show(coverage_figures()[0])
    show(fleet_figures(manifest, files, work, runs))
    show(profile_figures(work / "profiles", files, seed, runs))
    show(tooltest_figures(work / "tool-tests", runs))
    show(serve_figures(work, runs))
    show(serve_call_figures(work, runs))
    return sorted(figures, key=lambda figure: figure.number), stages, times.floor


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


if __name__ == "__main__":
    sys.exit(main())
