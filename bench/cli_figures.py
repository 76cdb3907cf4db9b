"""Figures 1, 2, 3 and 7: whole commands, each a fresh process, as a user or CI runs them."""

from __future__ import annotations

import re
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import Corpus
from bench.timing import (
    REPOSITORY,
    Figure,
    median_pair,
    ratio_figure,
    run_process,
    venv_tool,
)

_DOCUMENT_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CompileTimes:
    """Medians of the interleaved rounds (seconds; 0 for what was not measured)."""

    floor: float
    cold: float
    warm: float
    edited: float = 0.0
    uncached: float = 0.0


def measure_compile(corpus: Corpus, work: Path, runs: int, *, details: bool = True
                    ) -> CompileTimes:
    """Per round: the floor, a compile with an empty cache, the same again with the cache
    filled and, with ``details``, a compile after one file changed (one file misses, the
    others hit) and one with the cache switched off (what writing the cache costs)."""
    capc = venv_tool("capc")
    cache = work / "compile-cache"
    output = work / "manifest.json"
    # Nothing of the user's cache directory is read or written: the entries go to
    # ``cache`` (emptied before each cold run) and the cache key to the work folder, so a
    # "cold" run is cold whatever earlier compiles left behind.
    user_cache = str(work / "user-cache")
    environment = {"CAPC_CACHE_DIR": str(cache), "XDG_CACHE_HOME": user_cache}
    no_cache = {"CAPC_NO_CACHE": "1", "XDG_CACHE_HOME": user_cache}
    compile_command = [capc, "compile", str(corpus.root), "-o", str(output)]
    edited_file = corpus.files[len(corpus.files) // 2]
    original = edited_file.read_bytes()
    rounds: dict[str, list[float]] = {"floor": [], "cold": [], "warm": [], "edited": [],
                                      "uncached": []}
    # Untimed: writes any stale bytecode (.pyc) and warms the file cache for both sides.
    run_process(compile_command, cwd=work, environment=no_cache)
    run_process([sys.executable, "-m", "bench.floor_parse", str(corpus.root)], cwd=REPOSITORY)
    for round_number in range(runs):
        rounds["floor"].append(run_process(
            [sys.executable, "-m", "bench.floor_parse", str(corpus.root)], cwd=REPOSITORY))
        shutil.rmtree(cache, ignore_errors=True)
        rounds["cold"].append(run_process(compile_command, cwd=work, environment=environment))
        rounds["warm"].append(run_process(compile_command, cwd=work, environment=environment))
        if not details:
            continue
        rounds["uncached"].append(run_process(compile_command, cwd=work, environment=no_cache))
        edited_file.write_bytes(original + f"# edit {round_number}\n".encode())
        try:
            rounds["edited"].append(
                run_process(compile_command, cwd=work, environment=environment))
        finally:
            edited_file.write_bytes(original)
    return CompileTimes(**{name: statistics.median(times) if times else 0.0
                           for name, times in rounds.items()})


def compile_figures(times: CompileTimes, files: int, costliest_stages: str) -> list[Figure]:
    """Figures 1 and 3 (and, for information, one file edited and the cache's own cost)."""
    return [
        ratio_figure("1", f"capc compile, {files} files vs CSafeLoader parse", times.cold,
                     times.floor, goal_ratio=2.0, reason=costliest_stages),
        ratio_figure("3", "no-change re-compile vs cold compile", times.warm, times.cold,
                     goal_ratio=0.25,
                     reason="a hit still pays interpreter start, click, the YAML loader "
                            "(imported by compiler.source's __init__), reading and hashing "
                            "every file and the json module's canonical bytes for the digest"),
        ratio_figure("3b", "re-compile after editing 1 file vs cold compile", times.edited,
                     times.cold, goal_ratio=None),
        ratio_figure("3c", "cold compile (cache written) vs CAPC_NO_CACHE=1", times.cold,
                     times.uncached, goal_ratio=None),
    ]


def split_for_check_jsonschema(corpus: Corpus, target: Path) -> dict[str, list[Path]]:
    """The corpus documents, one per file (check-jsonschema reads one document per file),
    grouped by the schema each one is validated against."""
    groups: dict[str, list[Path]] = {"capability-v1.json": [], "tool-override-v1.json": []}
    target.mkdir(parents=True, exist_ok=True)
    for number, path in enumerate(corpus.files):
        for index, document in enumerate(_DOCUMENT_SEPARATOR.split(path.read_text("utf-8"))):
            schema = ("tool-override-v1.json" if "\nkind: ToolOverride" in document
                      else "capability-v1.json")
            single = target / f"{number:05d}-{index}.yaml"
            single.write_text(document, encoding="utf-8")
            groups[schema].append(single)
    return groups


def validate_figure(corpus: Corpus, work: Path, runs: int) -> Figure:
    """Figure 2: ``capc validate`` (every check, no cache) vs check-jsonschema (schema only)."""
    groups = split_for_check_jsonschema(corpus, work / "single-documents")
    schemas = REPOSITORY / "compiler" / "schema" / "json"
    check = venv_tool("check-jsonschema")

    def check_jsonschema() -> float:
        return sum(run_process([check, "--schemafile", str(schemas / schema),
                                *map(str, paths)])
                   for schema, paths in groups.items() if paths)

    def capc_validate() -> float:
        return run_process([venv_tool("capc"), "validate", str(corpus.root)], cwd=work,
                           environment={"CAPC_NO_CACHE": "1"})

    measured, baseline = median_pair(capc_validate, check_jsonschema, runs)
    return ratio_figure("2", "capc validate (no cache) vs check-jsonschema", measured, baseline,
                        goal_ratio=0.5, goal="<= 0.5x (2x faster)",
                        reason="check-jsonschema got faster than expected")


def import_figure(runs: int) -> Figure:
    """Figure 7: a fresh interpreter importing compiler.runtime vs langchain_core.tools."""
    runtime = [sys.executable, "-c", "import compiler.runtime"]
    langchain = [sys.executable, "-c", "import langchain_core.tools"]
    measured, baseline = median_pair(lambda: run_process(runtime, cwd=REPOSITORY),
                                     lambda: run_process(langchain, cwd=REPOSITORY), runs)
    return ratio_figure("7", "python -c 'import compiler.runtime' vs langchain_core.tools",
                        measured, baseline, goal_ratio=1.2,
                        reason="the runtime package imports more than LangChain's tools module")
