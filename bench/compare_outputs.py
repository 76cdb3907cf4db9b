"""Did a change keep every output? This checkout's ``capc compile`` against another's.

    python -m bench.compare_outputs OTHER_CHECKOUT [--files 200] [--options default,strict]
                                                   [--modes no-cache,cold,warm] [--trees ...]

Over the golden trees (every case of ``tests/cases/{good,bad,hostile}``, compiled in its
folder as the golden tests do), the shipped tree and a generated corpus (``bench.corpus``),
each under several option sets (capc's defaults, ``--strict``,
``--allow-private-networks``) and cache modes (``--no-cache``; a cold cache; the same cache
again, warm), both checkouts run ``python -m compiler compile ... --format json`` in a fresh
process, and everything a user sees is compared: the exit code, stdout (the diagnostics, as
JSON), stderr, and the manifest's bytes. It prints each difference and a count, and exits
1 when there is any. ``OTHER_CHECKOUT`` is a ``git archive`` or worktree of the baseline
(main, say); its ``compiler`` package is the one imported for its runs.

Not a timing: speed is ``bench.compare_trees``'s. This proves a faster (or refactored)
path gives the same outputs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import DEFAULT_SEED, write_corpus
from bench.timing import REPOSITORY

OPTION_SETS = {"default": (), "strict": ("--strict",),
               "private": ("--allow-private-networks",)}
MODES = ("no-cache", "cold", "warm")


@dataclass(frozen=True, slots=True)
class Tree:
    """One tree to compile: the folder to run in and the sources named there."""

    label: str
    cwd: Path
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Output:
    """What one compile showed: exit code, stdout, stderr, manifest bytes (None: none)."""

    code: int
    stdout: str
    stderr: str
    manifest: bytes | None


def golden_trees() -> Iterator[Tree]:
    """Every golden case, run as tests/support/golden.py runs it (in its folder, ``src``)."""
    cases = REPOSITORY / "tests" / "cases"
    for kind in ("good", "bad", "hostile"):
        for case in sorted(path for path in (cases / kind).iterdir() if path.is_dir()):
            sources = ("src",) if (case / "src").exists() else ()
            yield Tree(f"{kind}/{case.name}", case, sources)


def compile_output(checkout: Path, tree: Tree, options: Sequence[str], mode: str,
                   work: Path) -> Output:
    """One ``capc compile`` of ``tree`` by ``checkout``'s compiler, in a fresh process."""
    output = work / "manifest.json"
    output.unlink(missing_ok=True)
    cache = work / "cache"
    arguments = [sys.executable, "-m", "compiler", "compile", *tree.sources, "-o", str(output),
                 "--format", "json", *options]
    if mode == "no-cache":
        arguments.append("--no-cache")
    environment = {**os.environ, "PYTHONPATH": str(checkout), "CAPC_CACHE_DIR": str(cache),
                   "XDG_CACHE_HOME": str(work / "user-cache")}
    for name in ("CAPC_NO_CACHE", "CAPC_SIGNING_KEY"):
        environment.pop(name, None)
    done = subprocess.run(arguments, cwd=tree.cwd, env=environment, capture_output=True,
                          text=True, timeout=600, check=False)
    manifest = output.read_bytes() if output.is_file() else None
    # Paths of this run's own temporary folder are the only expected difference.
    shown = [text.replace(str(work), "WORK") for text in (done.stdout, done.stderr)]
    return Output(done.returncode, shown[0], shown[1], manifest)


def runs(tree: Tree, options: Sequence[str], modes: Sequence[str], checkout: Path,
         work: Path) -> dict[str, Output]:
    """Each mode's output for one checkout (cold then warm share one cache folder)."""
    found: dict[str, Output] = {}
    for mode in modes:
        if mode != "warm":
            subprocess.run(["rm", "-rf", str(work / "cache")], check=True)
        elif "cold" not in found:  # warm needs a filled cache
            compile_output(checkout, tree, options, "cold", work)
        found[mode] = compile_output(checkout, tree, options, mode, work)
    return found


def differences(before: Output, after: Output) -> list[str]:
    """The fields that differ, named."""
    return [name for name in ("code", "stdout", "stderr", "manifest")
            if getattr(before, name) != getattr(after, name)]


def compare(other: Path, trees: Sequence[Tree], option_sets: Sequence[str],
            modes: Sequence[str]) -> int:
    """Print every difference; the number of (tree, options, mode) runs that differ."""
    different = 0
    compared = 0
    with tempfile.TemporaryDirectory(prefix="capc-compare-") as folder:
        mine, theirs = Path(folder, "this"), Path(folder, "other")
        mine.mkdir()
        theirs.mkdir()
        for tree in trees:
            for name in option_sets:
                options = OPTION_SETS[name]
                before = runs(tree, options, modes, other, theirs)
                after = runs(tree, options, modes, REPOSITORY, mine)
                for mode in modes:
                    compared += 1
                    changed = differences(before[mode], after[mode])
                    if changed:
                        different += 1
                        print(f"DIFFERENT {tree.label} [{name}, {mode}]: {', '.join(changed)}")
    print(f"compare_outputs: {compared} runs ({len(trees)} trees x {len(option_sets)} option "
          f"sets x {len(modes)} modes), {different} differences")
    return different


def main(arguments: Sequence[str] | None = None) -> int:
    """Parse the flags, build the trees, compare; exit 1 on any difference."""
    parser = argparse.ArgumentParser(prog="python -m bench.compare_outputs",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the baseline checkout (its repository root)")
    parser.add_argument("--files", type=int, default=200,
                        help="files of the generated corpus (0: leave it out)")
    parser.add_argument("--options", default=",".join(OPTION_SETS),
                        help=f"option sets, among {', '.join(OPTION_SETS)}")
    parser.add_argument("--modes", default=",".join(MODES), help="cache modes")
    parser.add_argument("--trees", nargs="*", default=None,
                        help="only the golden cases whose label contains one of these")
    args = parser.parse_args(arguments)
    if not (args.other / "compiler" / "__init__.py").is_file():
        parser.error(f"{args.other}: not a capc checkout (no compiler/__init__.py)")
    trees = [tree for tree in golden_trees()
             if args.trees is None or any(part in tree.label for part in args.trees)]
    with tempfile.TemporaryDirectory(prefix="capc-corpus-") as corpus:
        if args.trees is None:
            trees.append(Tree("shipped", REPOSITORY, ("capabilities",)))
            if args.files:
                write_corpus(Path(corpus) / "capabilities", args.files, seed=DEFAULT_SEED)
                trees.append(Tree(f"corpus-{args.files}", Path(corpus), ("capabilities",)))
        different = compare(args.other.resolve(), trees, args.options.split(","),
                            args.modes.split(","))
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
