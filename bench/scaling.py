"""How cost grows with the tree: the same measurements at several corpus sizes."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.cli_figures import measure_compile
from bench.corpus import write_corpus
from bench.runtime_figures import _first_resolve_seconds, compile_to_file
from bench.timing import REPOSITORY, format_duration, median_of, run_process, timed
from compiler.runtime import ToolRegistry, load_manifest


@dataclass(frozen=True, slots=True)
class ScalingRow:
    """Medians at one corpus size."""

    files: int
    floor: float
    cold: float
    warm: float
    load: float
    resolve: float


def measure_scaling(sizes: list[int], work: Path, seed: int, runs: int) -> list[ScalingRow]:
    """Write a corpus of each size and measure compile (cold, warm), load and resolve."""
    rows = []
    for size in sizes:
        folder = work / f"scaling-{size}"
        corpus = write_corpus(folder / "capabilities", size, seed)
        times = measure_compile(corpus, folder, runs, details=False)
        manifest = compile_to_file(corpus.root, folder / "in-process.json")
        load = median_of(lambda path=manifest: timed(  # type: ignore[misc]
            lambda: load_manifest(path, registry=ToolRegistry())), runs)
        resolve = _first_resolve_seconds(manifest, runs)
        rows.append(ScalingRow(size, times.floor, times.cold, times.warm, load, resolve))
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def interpreter_start(runs: int) -> float:
    """A bare ``python -c pass``: the part of every command no code of ours can remove."""
    return median_of(lambda: run_process([sys.executable, "-c", "pass"], cwd=REPOSITORY),
                     runs)


def format_scaling(rows: list[ScalingRow]) -> str:
    """The scaling table (Markdown), with the cold compile's cost per file."""
    header = ("files", "parse floor", "cold compile", "per file", "re-compile",
              "load_manifest", "resolve 50")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = (f"{row.files:,}", format_duration(row.floor, "s"),
                 format_duration(row.cold, "s"), format_duration(row.cold / row.files, "s"),
                 format_duration(row.warm, "s"), format_duration(row.load, "s"),
                 format_duration(row.resolve, "s"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
