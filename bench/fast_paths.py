"""What each shortcut of the compile buys: the bench corpus compiled with it and without.

    python -m bench.fast_paths [--files 2000] [--runs 7]

Each shortcut of ``compiler/`` that a cold compile of the bench corpus takes (a fast path
beside its general path, or a remembered answer) is switched off in turn, by pointing the
name the compile calls at the general path, and the corpus is loaded and compiled in this
process with it and without it, alternately, ``--runs`` times each (the collector paused,
remembered answers start empty, as in a fresh compile). A shortcut of ``capc import
openapi``'s reading is measured on a block-YAML OpenAPI document of as many operations as
the corpus has files, read and each operation located. It prints the median
CPU time of each and what the shortcut buys; a shortcut buying under about 3 ms is not worth
its second path (docs/performance.md, "Fast paths"). CPU time, not wall time: the figure
is read on a machine shared with other work.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from bench.corpus import DEFAULT_FILES, write_corpus
from compiler.pipeline import compile_documents
from compiler.source.discovery import SourceFile, discover
from compiler.source.documents import load_files

THRESHOLD = 0.003  # seconds: under this, a shortcut is not worth its second path


@dataclass(frozen=True, slots=True)
class Shortcut:
    """A shortcut of the compile, how to switch it off, and the test proving it equal."""

    name: str
    proven_by: str
    disabled: Callable[[], AbstractContextManager[object]]
    # "load": reading the files; "compile": checks to manifest; "openapi": reading a
    # block-YAML OpenAPI document of as many operations as the corpus has files.
    stage: str = "compile"


def _patched(target: str, replacement: Any) -> Callable[[], AbstractContextManager[object]]:
    return lambda: mock.patch(target, replacement)


def _resolving_through_the_base_resolver() -> AbstractContextManager[object]:
    from yaml.resolver import BaseResolver

    return mock.patch("compiler.source.yaml_resolver.StrictParser.resolve", BaseResolver.resolve)


def _folded_header_name(name: str) -> str:
    """normalized_header_name's general path alone (every name decomposed and filtered)."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", name)
    visible = "".join(character for character in decomposed
                      if unicodedata.category(character) not in ("Mn", "Cf"))
    return visible.strip().rstrip(":").strip().casefold()


def _forgetting_answers() -> AbstractContextManager[object]:
    """RepeatedAnswers keeping nothing: every host judged, every header checked."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch("compiler.checks.url_rules._MAX_REMEMBERED_HOST", -1))
    stack.enter_context(mock.patch("compiler.checks.url_rules._MAX_REMEMBERED_TEXT", -1))
    return stack


def _read_the_general_way(text: str) -> Any:
    """read_block_yaml giving up on every text: each is read the general way."""
    from compiler.authoring.openapi.block_yaml import OutsideTheSubset

    raise OutsideTheSubset("switched off")


def write_openapi_document(path: Path, operations: int) -> Path:
    """A block-YAML OpenAPI document of ``operations`` operations (PyYAML's layout: long
    descriptions folded across lines, quoted and plain scalars, nested schemas)."""
    import yaml

    paths = {}
    for number in range(operations):
        paths[f"/things/{number}/{{thing_id}}"] = {"get": {
            "operationId": f"getThing{number}", "tags": ["things", f"group-{number % 7}"],
            "summary": f"Get thing {number}",
            "description": "Returns the thing's current state: its owner, labels and the "
                           "history of changes, newest first. Fields not asked for with "
                           "`fields=` are left out.\n\nRate limited: 60 calls a minute.",
            "parameters": [
                {"name": "thing_id", "in": "path", "required": True,
                 "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,64}$"}},
                {"name": "fields", "in": "query", "schema": {
                    "type": "array", "items": {"type": "string", "enum": ["owner", "labels"]}}}],
            "responses": {"200": {"description": "the thing", "content": {"application/json": {
                "schema": {"type": "object", "required": ["id"], "properties": {
                    "id": {"type": "integer", "format": "int64", "example": 1200 + number},
                    "ratio": {"type": "number", "example": 0.5},
                    "open": {"type": "boolean", "default": False, "nullable": True},
                    "owner": {"$ref": "#/components/schemas/Owner"}}}}}},
                "404": {"description": "no such thing"}}}}
    document = {"openapi": "3.0.3", "info": {"title": "Things", "version": "1.0"},
                "servers": [{"url": "https://api.example.com"}], "paths": paths,
                "components": {"schemas": {"Owner": {"type": "object", "properties": {
                    "login": {"type": "string"}, "site_admin": {"type": "boolean"}}}}}}
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump(document, Dumper=dumper, sort_keys=False, width=80),
                    encoding="utf-8")
    return path


def _api_checks_one_document_at_a_time() -> AbstractContextManager[object]:
    """check_api_documents document by document (its checks in turn for each), one run's
    answers shared as in one call."""
    from compiler.checks import api

    general = api.check_api_documents

    def each(documents: Any, allow_private_networks: bool, policy: Any = None) -> list[Any]:
        answers = api.RepeatedAnswers(policy.allowed_networks if policy else ())
        with mock.patch.object(api, "RepeatedAnswers", lambda *_: answers):
            return [found for document in documents
                    for found in general([document], allow_private_networks, policy)]

    return mock.patch("compiler.pipeline.check_api_documents", each)


def shortcuts() -> tuple[Shortcut, ...]:
    """Every shortcut a cold compile of the bench corpus takes."""
    from compiler.source.yaml_converter import NodeConverter

    return (
        Shortcut("schema: jsonschema-rs says valid",
                 "tests/schema/test_fast_schema_check.py",
                 _patched("compiler.schema.validation.fast_check_for", lambda kind: None)),
        Shortcut("checks: plain URLs skip the URL rules",
                 "tests/checks/test_url_fast_path.py",
                 _patched("compiler.checks.url_rules._PLAIN_URL",
                          __import__("re").compile(r"(?!)"))),
        Shortcut("source: plain scalar tags by first character",
                 "tests/source/test_loader_fast_paths.py",
                 _resolving_through_the_base_resolver, "load"),
        Shortcut("source: plain texts' tags remembered for the compile",
                 "tests/source/test_loader_fast_paths.py",
                 _patched("compiler.source.yaml_resolver.REMEMBERED_LENGTH", -1), "load"),
        Shortcut("source: one look at a text spares per-node checks",
                 "tests/source/test_converter_fast_paths.py",
                 lambda: mock.patch.object(
                     NodeConverter, "for_text",
                     staticmethod(lambda problems, text: NodeConverter(problems, text))),
                 "load"),
        Shortcut("egress: ASCII header names need no folding",
                 "tests/runtime/egress/test_header_names.py",
                 _patched("compiler.runtime.egress.headers.normalized_header_name",
                          _folded_header_name)),
        Shortcut("checks: a run's host and header answers remembered",
                 "tests/checks/test_repeated_answers.py", _forgetting_answers),
        Shortcut("checks: api checks one at a time over all documents",
                 "tests/checks/test_check_fast_paths.py",
                 _api_checks_one_document_at_a_time),
        Shortcut("checks: scaffold placeholders' first pass",
                 "tests/checks/test_placeholder_first_pass.py",
                 _patched("compiler.checks.scaffold_placeholders._may_hold_placeholder",
                          lambda data: True)),
        Shortcut("openapi: a block-YAML document read in one pass",
                 "tests/authoring/openapi/test_openapi_block_yaml.py",
                 _patched("compiler.authoring.openapi.document.read_block_yaml",
                          _read_the_general_way), "openapi"),
    )


def stage_seconds(stage: str, files: list[SourceFile], documents: list[Any],
                  openapi: Path | None = None) -> float:
    """CPU seconds of one run of ``stage`` (loading ``files``, compiling ``documents``, or
    reading the OpenAPI document ``openapi`` and locating each operation), the collector
    paused."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        if stage == "load":
            load_files(files)
        elif stage == "openapi":
            from compiler.authoring.openapi.document import read_document_file

            assert openapi is not None
            read = read_document_file(openapi, openapi.name)
            for name in read.data["paths"]:
                read.locate(("paths", name, "get", "responses", "200"))
        else:
            result = compile_documents(documents)
            if result.manifest is None:
                raise RuntimeError("the benchmark corpus does not compile")
        return time.process_time() - start
    finally:
        if enabled:
            gc.enable()


def measure(shortcut: Shortcut, files: list[SourceFile], documents: list[Any],
            runs: int, openapi: Path | None = None) -> tuple[float, float, float]:
    """Median CPU seconds of the shortcut's stage with it and without it, and the median
    of the paired differences (each pair run back to back, in alternating order)."""
    taken: list[float] = []
    skipped: list[float] = []
    for run in range(runs):
        for off in ((False, True) if run % 2 == 0 else (True, False)):
            with shortcut.disabled() if off else contextlib.nullcontext():
                (skipped if off else taken).append(
                    stage_seconds(shortcut.stage, files, documents, openapi))
    buys = statistics.median(b - a for a, b in zip(taken, skipped, strict=True))
    return statistics.median(taken), statistics.median(skipped), buys


def main(argv: list[str] | None = None) -> int:
    """Print what each shortcut buys on the bench corpus."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default="",
                        help="measure only the shortcuts whose name holds this text")
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        corpus = write_corpus(Path(folder) / "capabilities", arguments.files)
        files = discover([str(corpus.root)], corpus.root.parent)
        documents, _ = load_files(files)
        openapi = write_openapi_document(Path(folder) / "openapi.yaml", arguments.files)
        stage_seconds("compile", files, documents)  # untimed: imports, compiled schemas
        print("| shortcut | stage | with | without | buys (paired median) | proven equal by |")
        print("|---|---|---|---|---|---|")
        for shortcut in shortcuts():
            if arguments.only not in shortcut.name:
                continue
            taken, skipped, buys = measure(shortcut, files, documents, arguments.runs,
                                           openapi)
            verdict = "" if buys >= THRESHOLD else " (under 3 ms)"
            print(f"| {shortcut.name} | {shortcut.stage} | {taken * 1000:.0f} ms | "
                  f"{skipped * 1000:.0f} ms | {buys * 1000:+.1f} ms{verdict} | "
                  f"{shortcut.proven_by} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
