"""Figure 22 (issue 33): imported operations with an output schema, capc vs FastMCP.

    python -m bench.output_coverage [--document NAME=PATH ...] [--json]

For GitHub's and Stripe's documents (the public corpus the tests read), in one run:

- capc: every operation imported (``--all``), the files compiled, and an operation
  counted when its tool in the manifest has an ``output_schema`` (what consumers get);
- FastMCP: ``FastMCP.from_openapi`` of the same document in a child process of its own
  venv (FastMCP 4 needs ``mcp>=2``, which capc's venv cannot hold; the venv is
  ``bench.serve_call_figures``'s, pinned, installed once), an operation counted when its
  tool has an ``output_schema``.

Both are matched by (method, path), so the shares are over the same operations. The
operations capc leaves as text are listed by reason (``responses.TEXT_REASONS``, or the
import's skip, or the compiler's drop), with the operations only one side covers. The
figure is FastMCP's count over capc's on the same operations (goal: at most 1, capc's
share at least FastMCP's). Nothing is fetched at measurement time.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.timing import Figure, ratio_figure
from compiler.authoring.openapi.generate import ImportSettings, generate
from compiler.authoring.openapi.import_openapi import read_openapi
from compiler.authoring.openapi.operations import list_operations
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.render import render_tool
from compiler.authoring.openapi.responses import derived_output_schema
from compiler.build import build
from compiler.compile_result import CompileOptions

Key = tuple[str, str]  # (METHOD, path)
FASTMCP_SCRIPT = """
import asyncio, json, sys, yaml
from fastmcp import FastMCP
text = open(sys.argv[1], encoding="utf-8").read()
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
spec = json.loads(text) if text.lstrip().startswith("{") else yaml.load(text, Loader=loader)
tools = asyncio.run(FastMCP.from_openapi(openapi_spec=spec).list_tools())
print(json.dumps([[t._route.method.upper(), t._route.path, t.output_schema is not None]
                  for t in tools]))
"""


@dataclass(slots=True)
class OutputCoverage:
    """One document: which operations each side gives an output schema, and capc's why-not."""

    name: str
    capc: dict[Key, bool] = field(default_factory=dict)
    fastmcp: dict[Key, bool] | None = None
    text_reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def counts(self) -> tuple[int, int, int]:
        """(operations, capc's with a schema, FastMCP's with a schema), over the
        operations both list (capc's alone without FastMCP)."""
        keys = set(self.capc) if self.fastmcp is None else set(self.capc) & set(self.fastmcp)
        theirs = 0 if self.fastmcp is None else sum(self.fastmcp[key] for key in keys)
        return len(keys), sum(self.capc[key] for key in keys), theirs

    def only(self, side: str) -> list[Key]:
        """Operations only ``side`` (``capc`` or ``fastmcp``) gives a schema."""
        other = self.fastmcp or {}
        if side == "capc":
            return sorted(k for k, v in self.capc.items() if v and not other.get(k, False))
        return sorted(k for k, v in other.items() if v and not self.capc.get(k, False))


def measure_capc(name: str, path: Path) -> OutputCoverage:
    """Import every operation of ``path``, compile, and read the manifest's schemas."""
    coverage = OutputCoverage(name)
    root, _ = read_openapi(path, str(path))
    operations = list_operations(root)
    generated = generate(root, operations, ImportSettings(None))
    refs = References(root)
    reasons: dict[str, str] = {}
    for operation in operations:
        target = Target(root, operation.json_path,
                        root.data["paths"][operation.key.path][operation.key.method])
        reasons[operation.code] = derived_output_schema(refs, target).reason
    for skipped in generated.skipped:
        reasons[skipped.operation.code] = "skipped by the import"
    with tempfile.TemporaryDirectory(prefix="capc-output-coverage-") as folder:
        out = Path(folder) / "capabilities" / "api"
        out.mkdir(parents=True)
        for tool in generated.tools:
            (out / f"{tool.operation.code}.yaml").write_text(
                render_tool(tool, "capability.json", path.name), encoding="utf-8")
        result = build([str(out)], options=CompileOptions(), cwd=Path(folder),
                       use_cache=False)
    if result.manifest is None:
        raise RuntimeError(f"{name}: the imported tree does not compile")
    typed = {entry["code"] for entry in result.manifest["capabilities"]
             if (entry.get("tool") or {}).get("output_schema") is not None}
    for operation in operations:
        key = (operation.key.method.upper(), operation.key.path)
        coverage.capc[key] = operation.code in typed
        if operation.code not in typed:
            reason = reasons.get(operation.code) or "dropped by the compiler"
            coverage.text_reasons[reason] += 1
            coverage.examples.setdefault(reason, " ".join(key))
    return coverage


def measure_fastmcp(python: Path, document: Path, work: Path) -> dict[Key, bool]:
    """FastMCP's tools of ``document``: (method, path) → has an output schema."""
    script = work / "fastmcp_output_schemas.py"
    script.write_text(FASTMCP_SCRIPT, encoding="utf-8")
    done = subprocess.run([str(python), str(script), str(document)], capture_output=True,
                          text=True, cwd=work, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"FastMCP failed on {document.name}: {done.stderr[-500:]}")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return {(method, route): bool(typed) for method, route, typed in rows}


def coverage_figures(documents: list[tuple[str, Path]] | None = None,
                     fastmcp: bool = True) -> tuple[list[Figure], list[OutputCoverage]]:
    """Figure 22 per document (FastMCP's count over capc's), and the measurements."""
    from bench.serve_call_figures import fastmcp_python

    python = fastmcp_python() if fastmcp else None
    results: list[OutputCoverage] = []
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="capc-output-coverage-") as folder:
        for index, (name, path) in enumerate(documents or default_documents()):
            coverage = measure_capc(name, path)
            if python is not None:
                coverage.fastmcp = measure_fastmcp(python, path, Path(folder))
            results.append(coverage)
            operations, ours, theirs = coverage.counts()
            figures.append(ratio_figure(
                f"22{'abcdefgh'[index]}",
                f"{name}: operations with an output schema, FastMCP / capc (of {operations})",
                theirs, ours, goal_ratio=1.0, unit="ops",
                reason="capc derives fewer output schemas than FastMCP"))
    return figures, results


def default_documents() -> list[tuple[str, Path]]:
    """GitHub's and Stripe's documents, as the tests read them."""
    from tests.authoring.openapi.public_corpus import public_document

    return [(name, public_document(name)) for name in ("github", "stripe")]


def report(coverage: OutputCoverage) -> list[str]:
    """The lines printed for one document."""
    operations, ours, theirs = coverage.counts()
    lines = [f"{coverage.name}: {operations} operations; capc {ours} "
             f"({100 * ours / max(operations, 1):.1f}%)"
             + ("" if coverage.fastmcp is None else
                f", FastMCP {theirs} ({100 * theirs / max(operations, 1):.1f}%)")]
    for reason, count in coverage.text_reasons.most_common():
        lines.append(f"    capc text only {count:4}  {reason} (e.g. "
                     f"{coverage.examples[reason]})")
    if coverage.fastmcp is not None:
        for side in ("capc", "fastmcp"):
            only = coverage.only(side)
            shown = ", ".join(" ".join(key) for key in only[:3])
            lines.append(f"    only {side:7} {len(only):4}" + (f"  e.g. {shown}" if only else ""))
    return lines


def _document(text: str) -> tuple[str, Path]:
    name, _, path = text.partition("=")
    return name, Path(path)


def main(argv: list[str] | None = None) -> int:
    """Print both sides' counts per document, capc's text-only reasons, and the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.output_coverage")
    parser.add_argument("--document", action="append", type=_document, default=[])
    parser.add_argument("--no-fastmcp", action="store_true")
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args(argv)
    figures, results = coverage_figures(arguments.document or None,
                                        fastmcp=not arguments.no_fastmcp)
    if arguments.json:
        print(json.dumps([{"name": c.name, "counts": c.counts(),
                           "text_reasons": dict(c.text_reasons)} for c in results], indent=1))
        return 0
    for coverage in results:
        print("\n".join(report(coverage)))
    for figure in figures:
        print(f"{figure.number}: {figure.title}: {figure.measured:.0f} / "
              f"{figure.baseline:.0f} = {figure.ratio:.2f}x ({figure.goal}) {figure.verdict()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
