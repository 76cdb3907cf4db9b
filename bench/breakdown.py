"""Where a cold compile's time goes: each stage timed on its own, in this process.

The stages are the public steps of compiler.build, run one after the other on the same
corpus: the sum is close to a whole compile minus the interpreter start. A missed goal
then names the stages that cost the most instead of guessing.
"""

from __future__ import annotations

import gc
import statistics
import sys
from collections.abc import Callable

from bench.corpus import Corpus
from bench.timing import REPOSITORY, format_duration, run_process, timed
from compiler.pipeline import compile_documents
from compiler.runtime.manifest.format import dump_manifest
from compiler.schema.validation import validate_document
from compiler.source.discovery import discover
from compiler.source.documents import load_files


def compile_stages(corpus: Corpus, runs: int) -> list[tuple[str, float]]:
    """Median seconds of each stage of compiling ``corpus`` (imports in a fresh process)."""
    root = [str(corpus.root)]
    files = discover(root, corpus.root.parent)
    documents, _ = load_files(files)
    result = compile_documents(documents)
    if result.manifest is None:
        raise RuntimeError("the benchmark corpus does not compile")
    manifest = result.manifest
    typed = [(document, str(document.data.get("kind"))) for document in documents]
    stages: list[tuple[str, Callable[[], object]]] = [
        ("discover files", lambda: discover(root, corpus.root.parent)),
        ("read + parse YAML (with positions)", lambda: load_files(files)),
        ("schema validation", lambda: [validate_document(d, kind) for d, kind in typed]),
        ("pipeline", lambda: compile_documents(documents)),
        ("manifest dump (digest + indented JSON)", lambda: dump_manifest(manifest)),
    ]
    # Timed with the cyclic collector paused, as compiler.build runs loading and checking.
    measured = dict((name, statistics.median(_paused(action) for _ in range(runs)))
                    for name, action in stages)
    # The pipeline validates too: show its other work (checks, normalise, overrides) apart.
    pipeline = measured.pop("pipeline")
    validation = measured["schema validation"]
    measured["semantic checks + normalise + overrides"] = max(pipeline - validation, 0.0)
    start = [sys.executable, "-c", "pass"]
    imports = [sys.executable, "-c", "import compiler.cli, compiler.pipeline"]
    run_process(imports, cwd=REPOSITORY)  # untimed: writes stale bytecode first
    bare = statistics.median(run_process(start, cwd=REPOSITORY) for _ in range(runs))
    loaded = statistics.median(run_process(imports, cwd=REPOSITORY) for _ in range(runs))
    return [("interpreter start", bare), ("imports (cli + pipeline)", loaded - bare),
            *measured.items()]


def _paused(action: Callable[[], object]) -> float:
    """Seconds of one call of ``action`` with the collector off (restored after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return timed(action)
    finally:
        if enabled:
            gc.enable()


def format_stages(stages: list[tuple[str, float]], floor: float) -> str:
    """The stages as a Markdown table, each also as a multiple of the parse floor."""
    lines = ["| stage | time | x floor |", "|---|---|---|"]
    lines += [f"| {name} | {format_duration(seconds, 's')} | {seconds / floor:.2f}x |"
              for name, seconds in stages]
    return "\n".join(lines)


def costliest(stages: list[tuple[str, float]], floor: float, count: int = 2) -> str:
    """The ``count`` costliest stages, for a MISSED reason."""
    ranked = sorted(stages, key=lambda stage: stage[1], reverse=True)
    return "; ".join(f"{name} {seconds / floor:.1f}x the floor"
                     for name, seconds in ranked[:count])

