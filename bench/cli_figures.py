"""Figures 1, 2, 3 and 7: whole commands, each a fresh process, as a user or CI runs them.

    python -m bench.cli_figures [--files 2000] [--runs 5]

runs figures 1, 3, 3b, 3c and 3p alone (the compile figures; the floor for 1).
"""

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


def compile_folders(work: Path) -> tuple[Path, Path]:
    """The folder figure 3's compiles run in (made here) and the user cache root they use,
    which is not inside it."""
    here = work / "compile-here"
    here.mkdir(parents=True, exist_ok=True)
    return here, work / "user-cache"


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
    # "cold" run is cold whatever earlier compiles left behind. The compiles run in a
    # folder of their own: a key inside the working directory could have come with the
    # checkout, so capc would use a key for that process only and no run would ever hit
    # (figure 3 measured about 1x that way).
    here, user_folder = compile_folders(work)
    user_cache = str(user_folder)
    # Bytecode is written (as an installed capc has it), whatever this shell says.
    environment = {"CAPC_CACHE_DIR": str(cache), "XDG_CACHE_HOME": user_cache,
                   "PYTHONDONTWRITEBYTECODE": ""}
    no_cache = {"CAPC_NO_CACHE": "1", "XDG_CACHE_HOME": user_cache,
                "PYTHONDONTWRITEBYTECODE": ""}
    compile_command = [capc, "compile", str(corpus.root), "-o", str(output)]
    edited_file = corpus.files[len(corpus.files) // 2]
    original = edited_file.read_bytes()
    rounds: dict[str, list[float]] = {"floor": [], "cold": [], "warm": [], "edited": [],
                                      "uncached": []}
    # Untimed: writes any stale bytecode (.pyc) and warms the file cache for both sides.
    run_process(compile_command, cwd=here, environment=no_cache)
    run_process([sys.executable, "-m", "bench.floor_parse", str(corpus.root)], cwd=REPOSITORY)
    for round_number in range(runs):
        rounds["floor"].append(run_process(
            [sys.executable, "-m", "bench.floor_parse", str(corpus.root)], cwd=REPOSITORY))
        shutil.rmtree(cache, ignore_errors=True)
        rounds["cold"].append(run_process(compile_command, cwd=here, environment=environment))
        rounds["warm"].append(run_process(compile_command, cwd=here, environment=environment))
        if not details:
            continue
        rounds["uncached"].append(run_process(compile_command, cwd=here, environment=no_cache))
        edited_file.write_bytes(original + f"# edit {round_number}\n".encode())
        try:
            rounds["edited"].append(
                run_process(compile_command, cwd=here, environment=environment))
        finally:
            edited_file.write_bytes(original)
    return CompileTimes(**{name: statistics.median(times) if times else 0.0
                           for name, times in rounds.items()})


_REGISTRATIONS = """\
from langchain_core.tools import tool

from compiler.runtime import ToolRegistry

registry = ToolRegistry()


@tool("lookup_records")
def lookup_records(query: str) -> str:
    \"\"\"Look records up by a free-text query.\"\"\"
    return query


for code in {codes!r}:
    registry.register_tools(code, [lookup_records], name=code, description="Bench tools")
"""


def write_project(corpus: Corpus, root: Path) -> Path:
    """A project around ``corpus`` as a team keeps one: ``pyproject.toml`` with
    ``[tool.capc]`` (roots, the installed plugins and the project's own registrations,
    which register every internal code the corpus names), compiled by a bare
    ``capc compile`` in its root into ``build/manifest.json``."""
    codes = sorted({line.split(":", 1)[1].strip() for path in corpus.files
                    for line in path.read_text("utf-8").splitlines()
                    if line.startswith("code: plugin_")} | {"base"})
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_tools.py").write_text(_REGISTRATIONS.format(codes=codes), encoding="utf-8")
    (root / "pyproject.toml").write_text(
        "[tool.capc]\n"
        f"roots = [{str(corpus.root.relative_to(root))!r}]\n"
        "plugins = true\nregistrations = [\"bench_tools\"]\n", encoding="utf-8")
    return root


def measure_project_compile(project: Path, work: Path, runs: int) -> tuple[float, float]:
    """Figure 3p: ``capc compile`` in ``project`` with every default (the cache in the
    user cache folder, emptied before each cold run): medians of the cold and the
    no-change compiles, interleaved."""
    user_cache = work / "project-user-cache"
    environment = {"XDG_CACHE_HOME": str(user_cache), "CAPC_CACHE_DIR": "",
                   "CAPC_NO_CACHE": "", "PYTHONDONTWRITEBYTECODE": ""}
    command = [venv_tool("capc"), "compile"]
    run_process(command, cwd=project, environment=environment)  # untimed: bytecode
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(runs):
        shutil.rmtree(user_cache / "capc", ignore_errors=True)
        cold.append(run_process(command, cwd=project, environment=environment))
        warm.append(run_process(command, cwd=project, environment=environment))
    return statistics.median(cold), statistics.median(warm)


def project_figure(cold: float, warm: float) -> Figure:
    """Figure 3p: figure 3 measured as a project runs it (plugins, registrations, defaults)."""
    return ratio_figure("3p", "no-change re-compile in a project with plugins vs its cold "
                        "compile", warm, cold, goal_ratio=0.25,
                        reason="plugin discovery or reading the tree dominates the hit")


def compile_figures(times: CompileTimes, files: int, costliest_stages: str) -> list[Figure]:
    """Figures 1 and 3 (and, for information, one file edited and the cache's own cost)."""
    return [
        ratio_figure("1", f"capc compile, {files} files vs CSafeLoader parse", times.cold,
                     times.floor, goal_ratio=2.0, reason=costliest_stages),
        ratio_figure("3", "no-change re-compile vs cold compile", times.warm, times.cold,
                     goal_ratio=0.25,
                     reason="a hit still pays interpreter start, the compile command's "
                            "imports, one stat per file and folder (the stat index) and "
                            "reading the stored manifest back"),
        ratio_figure("3b", "re-compile after editing 1 file vs cold compile", times.edited,
                     times.cold, goal_ratio=0.5,
                     reason="the edited file's parse and checks, and the whole tree's "
                            "normalisation, cross-document checks and manifest bytes run "
                            "again"),
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


def main(argv: list[str] | None = None) -> int:
    """Measure and print the compile figures alone (1, 3, 3b, 3c, 3p)."""
    import argparse
    import tempfile

    from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, write_corpus
    from bench.timing import format_table

    parser = argparse.ArgumentParser(prog="python -m bench.cli_figures")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="capc-bench-") as temporary:
        work = Path(temporary)
        corpus = write_corpus(work / "capabilities", arguments.files, DEFAULT_SEED)
        times = measure_compile(corpus, work, arguments.runs)
        project = write_project(write_corpus(work / "project" / "capabilities",
                                             arguments.files, DEFAULT_SEED), work / "project")
        figures = [*compile_figures(times, arguments.files, "see bench.breakdown"),
                   project_figure(*measure_project_compile(project, work, arguments.runs))]
    print(format_table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
