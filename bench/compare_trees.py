"""Figure 1 for two checkouts side by side, in CPU time: was a change to the compiler faster?

    python -m bench.compare_trees OTHER_CHECKOUT [--files 2000] [--runs 7]

Per round, in alternation: the parse floor (``bench.floor_parse``), a cold compile (empty
cache) with this checkout's ``compiler`` package and one with ``OTHER_CHECKOUT``'s (a
``git archive`` or worktree of main, say), each a fresh process on the same generated
corpus. Each is reported as the median CPU time (user + system of the child, from
``os.wait4``) and as a multiple of the floor. CPU time, not wall time: on a shared machine
a neighbour stretches the wall clock of every run, but not the CPU a run spends.

The untimed first run of each tree writes its bytecode (``__pycache__``), as installing a
package does, even when ``PYTHONDONTWRITEBYTECODE`` is set: otherwise every timed compile
would also compile the package's sources (about 70 ms of CPU), while the floor's ``yaml``
loads the bytecode its install wrote. "Cold" is the compile cache, not Python's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, write_corpus
from bench.timing import REPOSITORY

WRITE_NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"


def cpu_seconds(arguments: Sequence[str], *, cwd: Path, environment: Mapping[str, str],
                unset: Sequence[str] = ()) -> float:
    """User + system CPU seconds of one child process; fails loudly when it exits non-zero.

    ``unset``: variables of this process's environment the child does not inherit.
    """
    return cpu_and_output(arguments, cwd=cwd, environment=environment, unset=unset)[0]


def cpu_and_output(arguments: Sequence[str], *, cwd: Path, environment: Mapping[str, str],
                   unset: Sequence[str] = ()) -> tuple[float, str]:
    """``cpu_seconds`` and what the child printed on its standard output."""
    inherited = {name: value for name, value in os.environ.items() if name not in unset}
    with tempfile.TemporaryFile() as printed:
        child = subprocess.Popen(list(arguments), cwd=cwd, env={**inherited, **environment},
                                 stdout=printed, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(arguments[:4])} ... exited {child.returncode}")
        printed.seek(0)
        return usage.ru_utime + usage.ru_stime, printed.read().decode()


def compare(other: Path, files: int, runs: int, work: Path) -> dict[str, float]:
    """Median CPU seconds of the floor and of a cold compile with each checkout's code."""
    corpus = write_corpus(work / "capabilities", files, DEFAULT_SEED)
    cache = work / "compile-cache"
    trees = {"other": other.resolve(), "this": REPOSITORY}
    floor = [sys.executable, "-m", "bench.floor_parse", str(corpus.root), "--cpu"]
    compile_command = [sys.executable, "-m", "compiler", "compile", str(corpus.root),
                       "-o", str(work / "manifest.json")]

    def environment(tree: Path) -> dict[str, str]:
        # PYTHONPATH first: that checkout's package wins over the installed one. The cache
        # goes to the work folder, so "cold" is cold whatever earlier compiles left.
        return {"PYTHONPATH": str(tree), "CAPC_CACHE_DIR": str(cache),
                "XDG_CACHE_HOME": str(work / "user-cache")}

    for tree in trees.values():  # untimed: bytecode written, file cache warm
        cpu_seconds(compile_command, cwd=work, environment=environment(tree),
                    unset=[WRITE_NO_BYTECODE])
    cpu_seconds(floor, cwd=REPOSITORY, environment={"PYTHONPATH": str(REPOSITORY)},
                unset=[WRITE_NO_BYTECODE])
    times: dict[str, list[float]] = {"floor": [], "parse": [], **{name: [] for name in trees}}
    for _ in range(runs):
        spent, printed = cpu_and_output(floor, cwd=REPOSITORY,
                                        environment={"PYTHONPATH": str(REPOSITORY)})
        times["floor"].append(spent)
        times["parse"].append(float(printed.split()[1]))  # the parse alone, in that process
        for name, tree in trees.items():
            shutil.rmtree(cache, ignore_errors=True)
            times[name].append(cpu_seconds(compile_command, cwd=work,
                                           environment=environment(tree)))
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    """Print the three medians and the two ratios to the floor."""
    parser = argparse.ArgumentParser(prog="python -m bench.compare_trees",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="the other checkout (holds compiler/)")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES, help="corpus size")
    parser.add_argument("--runs", type=int, default=7, help="rounds (median)")
    arguments = parser.parse_args(argv)
    if not (arguments.other / "compiler" / "__init__.py").is_file():
        parser.error(f"{arguments.other} holds no compiler package")
    with tempfile.TemporaryDirectory(prefix="capc-compare-") as temporary:
        medians = compare(arguments.other, arguments.files, arguments.runs, Path(temporary))
    floor, parse = medians["floor"], medians["parse"]
    print(f"{arguments.files} files, CPU time medians of {arguments.runs} interleaved rounds")
    print("| run | CPU time | x floor | x parse alone |\n|---|---|---|---|")
    print(f"| CSafeLoader parse (floor), fresh process | {floor * 1e3:.0f} ms | 1.00x | "
          f"{floor / parse:.2f}x |")
    print(f"| the same parse alone (no start, no import) | {parse * 1e3:.0f} ms | "
          f"{parse / floor:.2f}x | 1.00x |")
    for name, label in (("other", f"cold compile, {arguments.other}"),
                        ("this", "cold compile, this checkout")):
        print(f"| {label} | {medians[name] * 1e3:.0f} ms | {medians[name] / floor:.2f}x | "
              f"{medians[name] / parse:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
