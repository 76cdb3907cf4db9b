"""Figures 3 and 3b for two checkouts side by side, in CPU time: is the warm path faster?

    python -m bench.compare_warm OTHER_CHECKOUT [--files 2000] [--runs 5]

Per round, in alternation between ``OTHER_CHECKOUT``'s ``compiler`` package and this
one's: a cold compile (empty cache), a no-change re-compile (after the racy window of the
stat index has passed, so the index is trusted, as in a developer's next compile) and a
compile after one file was edited (a comment appended, then the file restored), each a
fresh process on the same generated corpus, outside the working directory. Reported as the
median CPU time (user + system of the child, ``os.wait4``) and the ratios to the cold
compile of the same checkout: CPU, not wall time, so a busy neighbour does not stretch
one side more than the other.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.compare_trees import WRITE_NO_BYTECODE, cpu_seconds
from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, write_corpus
from bench.timing import REPOSITORY

RACY_SECONDS = 2.1  # the stat index trusts a signature two seconds old (cache/read_recorder)
KINDS = ("cold", "no-change", "edited")


def compare(other: Path, files: int, runs: int, work: Path) -> dict[str, dict[str, float]]:
    """Median CPU seconds of each kind of compile, by checkout ("other", "this")."""
    corpus = write_corpus(work / "capabilities", files, DEFAULT_SEED)
    edited = corpus.files[len(corpus.files) // 2]
    original = edited.read_bytes()
    here = work / "compile-here"
    here.mkdir()
    trees = {"other": other.resolve(), "this": REPOSITORY}
    command = [sys.executable, "-m", "compiler", "compile", str(corpus.root),
               "-o", str(work / "manifest.json")]

    def environment(name: str) -> dict[str, str]:
        return {"PYTHONPATH": str(trees[name]), "CAPC_CACHE_DIR": str(work / f"cache-{name}"),
                "XDG_CACHE_HOME": str(work / "user-cache")}

    for name in trees:  # untimed: bytecode written, file cache warm
        cpu_seconds(command, cwd=here, environment=environment(name), unset=[WRITE_NO_BYTECODE])
    times: dict[str, dict[str, list[float]]] = {name: {kind: [] for kind in KINDS}
                                               for name in trees}
    for round_number in range(runs):
        for name in trees:
            shutil.rmtree(work / f"cache-{name}", ignore_errors=True)
            times[name]["cold"].append(cpu_seconds(command, cwd=here,
                                                   environment=environment(name)))
            time.sleep(RACY_SECONDS)
            times[name]["no-change"].append(cpu_seconds(command, cwd=here,
                                                        environment=environment(name)))
            edited.write_bytes(original + f"# edit {round_number}\n".encode())
            try:
                times[name]["edited"].append(cpu_seconds(command, cwd=here,
                                                         environment=environment(name)))
            finally:
                edited.write_bytes(original)
    return {name: {kind: statistics.median(values) for kind, values in kinds.items()}
            for name, kinds in times.items()}


def main(argv: list[str] | None = None) -> int:
    """Print each checkout's medians and ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench.compare_warm",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="the other checkout (holds compiler/)")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES, help="corpus size")
    parser.add_argument("--runs", type=int, default=5, help="rounds (median)")
    arguments = parser.parse_args(argv)
    if not (arguments.other / "compiler" / "__init__.py").is_file():
        parser.error(f"{arguments.other} holds no compiler package")
    with tempfile.TemporaryDirectory(prefix="capc-warm-") as temporary:
        medians = compare(arguments.other, arguments.files, arguments.runs, Path(temporary))
    print(f"{arguments.files} files, CPU time medians of {arguments.runs} interleaved rounds")
    print("| checkout | cold | no-change | ratio | one file edited | ratio |")
    print("|---|---|---|---|---|---|")
    for name, label in (("other", str(arguments.other)), ("this", "this checkout")):
        kinds = medians[name]
        print(f"| {label} | {kinds['cold'] * 1e3:.0f} ms | {kinds['no-change'] * 1e3:.0f} ms | "
              f"{kinds['no-change'] / kinds['cold']:.2f}x | {kinds['edited'] * 1e3:.0f} ms | "
              f"{kinds['edited'] / kinds['cold']:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
