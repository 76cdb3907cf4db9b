"""Where ``capc import openapi --all`` spends its time, stage by stage, in one process.

    python -m bench.openapi_profile DOCUMENT [--server URL] [--cprofile OUT] [--top 25]
                                    [--checkout PATH]

DOCUMENT is a path, or ``github``, ``stripe``, ``kubernetes`` or ``graph``: the public
documents the tests read (``tests/authoring/openapi/public_corpus.py``, ``directory_corpus.py``).

Imports every operation of DOCUMENT into a fresh temporary project (as the CLI does,
without the CLI) and prints the wall and CPU time of each stage: parse (read, validate,
convert), map (operations to capability data), render (data to YAML text), compile-check
(the one compile of the tree as it would be) and write, with the process's peak RSS.
``--cprofile OUT`` also writes a cProfile of the whole import to OUT and prints its
``--top`` functions by own time. The stages are timed by wrapping the import module's
functions of those names, so the split follows the code, not a copy of it; ``--checkout``
times another checkout's compiler (main's, say) the same way.
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
KUBERNETES_SERVER = "https://kubernetes.example.com"  # its document names none
# Stage name -> (module, function) pairs it wraps, in this checkout's layout and in
# the one before the fast writer (so --checkout can time an older tree); a stage's time
# is its own, without the stages it calls (the files are rendered while mapping).
_MODULE = "compiler.authoring.openapi.import_openapi"
_TREE = "compiler.authoring.openapi.generated_tree"
STAGES = {"parse": ((_MODULE, "read_openapi"),),
          "map": ((_MODULE, "generate"),),
          "render": ((_TREE, "render_tool"), (_MODULE, "render_tool")),
          "compile-check": ((_MODULE, "compile_diagnostics"), (_MODULE, "compile_errors"),
                            (_MODULE, "_compile_errors")),
          "write": ((_MODULE, "write_files"), (_MODULE, "_write"))}


def _wrap(totals: dict[str, list[float]], running: list[str]) -> None:
    import importlib

    for stage, places in STAGES.items():
        for module_name, name in places:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            function = getattr(module, name, None)
            if function is not None:
                setattr(module, name, _timed(function, totals, running, stage))


def _timed(function: Callable[..., Any], totals: dict[str, list[float]],
           running: list[str], stage: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        running.append(stage)
        try:
            return function(*args, **kwargs)
        finally:
            running.pop()
            spent = (time.perf_counter() - wall, time.process_time() - cpu)
            totals[stage][0] += spent[0]
            totals[stage][1] += spent[1]
            if running:  # not the caller's own time
                totals[running[-1]][0] -= spent[0]
                totals[running[-1]][1] -= spent[1]
    return wrapper


def profile_import(document: Path, project: Path, server: str | None = None,
                   cprofile: Path | None = None, checkout: Path = REPOSITORY
                   ) -> tuple[dict[str, list[float]], float, int]:
    """Import ``document`` whole into a fresh project in ``project`` with ``checkout``'s
    compiler: per-stage [wall, cpu] seconds, the total wall seconds and the exit code."""
    sys.path.insert(0, str(checkout))
    totals = {stage: [0.0, 0.0] for stage in STAGES}
    _wrap(totals, [])
    from compiler.authoring.openapi import import_openapi as module

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


def document_path(given: str) -> Path:
    """A path as given, or the public test document of that name."""
    sys.path.insert(0, str(REPOSITORY))
    if given == "graph":
        from tests.authoring.openapi.directory_corpus import directory_document

        return directory_document("graph")
    from tests.authoring.openapi.public_corpus import MEMBERS, public_document

    return public_document(given) if given in MEMBERS else Path(given).resolve()


def main(argv: list[str] | None = None) -> int:
    """Print the stage split (and the cProfile's top functions)."""
    parser = argparse.ArgumentParser(prog="python -m bench.openapi_profile")
    parser.add_argument("document")
    parser.add_argument("--server", default=None)
    parser.add_argument("--cprofile", type=Path, default=None)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--checkout", type=Path, default=REPOSITORY,
                        help="the checkout whose compiler imports (default: this one)")
    arguments = parser.parse_args(argv)
    document = document_path(arguments.document)
    server = arguments.server or (KUBERNETES_SERVER if arguments.document == "kubernetes"
                                  else None)
    cprofile = arguments.cprofile.resolve() if arguments.cprofile else None
    with tempfile.TemporaryDirectory(prefix="capc-openapi-profile-") as project:
        totals, total, code = profile_import(document, Path(project), server, cprofile,
                                             arguments.checkout.resolve())
        os.chdir(REPOSITORY)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{document.name}: exit {code}, {total:.2f} s wall, peak RSS {peak:.0f} MiB")
    rest = total - sum(wall for wall, _ in totals.values())
    for stage, (wall, cpu) in totals.items():
        print(f"  {stage:14} {wall:8.2f} s wall {cpu:8.2f} s CPU {wall / total:6.1%}")
    print(f"  {'other':14} {rest:8.2f} s wall")
    if arguments.cprofile is not None:
        import pstats

        pstats.Stats(str(cprofile)).sort_stats("tottime").print_stats(arguments.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
