"""``capc import openapi``: read, select, generate, check the tree, then write (or compare).

Every stage before writing can refuse; nothing is written unless the tree as it would be
after the import compiles without errors. Files go into one folder; a file there that a
previous import generated (it has ``origin.openapi``) is regenerated, any other file in
the way is refused unless ``--force``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.authoring.openapi.document import DocumentFile, read_document_file
from compiler.authoring.openapi.existing import GeneratedFiles, read_generated
from compiler.authoring.openapi.generate import Generated, ImportSettings, document_info, generate
from compiler.authoring.openapi.naming import folder_name
from compiler.authoring.openapi.operations import (
    Operation,
    list_operations,
    select_operations,
)
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.render import render_tool
from compiler.authoring.openapi.validate import check_version, validate_document
from compiler.compile_result import CompileOptions
from compiler.diagnostics import Diagnostic, Location
from compiler.source.safe_read import MAX_SOURCE_BYTES

ALL = "--all"


@dataclass(frozen=True, slots=True)
class OpenApiRequest:
    """The flags of one ``capc import openapi`` run."""

    spec: str
    output_dir: str | None = None
    selectors: tuple[str, ...] = ()
    take_all: bool = False
    server: str | None = None
    check: bool = False
    force: bool = False
    allow_private_networks: bool = False
    roots: tuple[str, ...] = ("capabilities",)
    output_format: str = "text"
    # Told (done, total) while operations are mapped; the CLI draws a line on a terminal.
    progress: Callable[[int, int], None] | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What to print and how to exit."""

    exit_code: int
    lines: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    written: tuple[str, ...] = field(default=())


def run_import(request: OpenApiRequest) -> Outcome:
    """Run one import; every refusal is a located diagnostic and exit 1, nothing written."""
    try:
        return _run(request)
    except ImportRefused as refused:
        return Outcome(1, (), refused.diagnostics)


def _run(request: OpenApiRequest) -> Outcome:
    real = Path(os.path.realpath(request.spec))
    shown = request.spec
    if not real.is_file():
        raise ImportRefused((Diagnostic.error(Location(shown), "openapi-read",
                                              "no such file (SPEC is a local file)"),))
    root = read_document_file(real, shown)
    check_version(root)
    warnings = list(validate_document(root))
    operations = list_operations(root)
    title, _ = document_info(root)
    out_dir = request.output_dir or Path(request.roots[0], folder_name(title)).as_posix()
    existing = read_generated(out_dir)
    selectors = _selectors(request, existing)
    if not selectors:
        return Outcome(0, _listing(operations, request.output_format), tuple(warnings))
    chosen = operations if ALL in selectors else select_operations(
        operations, [s for s in selectors if s != ALL], root)
    settings = ImportSettings(request.server, request.allow_private_networks)
    generated = generate(root, chosen, settings, request.progress)
    warnings += generated.warnings
    warnings += [root.warning(s.operation.json_path, "openapi-skipped",
                              f"{s.operation.key.label} not imported: {s.reason}")
                 for s in generated.skipped]
    files = _render(root, generated, out_dir, real.name, selectors)
    if request.check:
        from compiler.authoring.openapi.drift import drift_report

        report = drift_report(existing, files, out_dir, request.allow_private_networks)
        return Outcome(1 if report.changed else 0, report.lines, tuple(warnings))
    problems = _tree_problems(files, out_dir, existing, request)
    if problems:
        return Outcome(1, (), (*warnings, *problems))
    written = _write(files, out_dir)
    return Outcome(0, _summary(generated, written, existing, files), tuple(warnings),
                   tuple(written))


def _selectors(request: OpenApiRequest, existing: GeneratedFiles) -> tuple[str, ...]:
    if request.take_all:
        return (ALL,)
    if request.selectors:
        return request.selectors
    if request.check:  # the selection the committed files were generated with
        return existing.selection
    return ()


def _listing(operations: Sequence[Operation], output_format: str) -> tuple[str, ...]:
    if output_format == "json":
        rows = [{"operation_id": op.key.operation_id, "code": op.code,
                 "method": op.key.method.upper(), "path": op.key.path, "tags": list(op.tags),
                 "summary": op.summary} for op in operations]
        return (json.dumps(rows, indent=2, ensure_ascii=False),)
    from compiler.authoring.openapi.render import comment_line

    lines = [f"{len(operations)} operations; choose with --operations ID|'METHOD /path'|"
             "tag:NAME (globs allowed) or --all:"]
    for op in operations:
        summary = comment_line(op.summary)[:80]
        lines.append(f"  {op.key.operation_id or '-':40} {op.key.label:50} {summary}".rstrip())
    return tuple(lines)


def _render(root: DocumentFile, generated: Generated, out_dir: str, document_name: str,
            selectors: tuple[str, ...]) -> dict[str, str]:
    from compiler.authoring.tree import schema_reference_from

    reference = schema_reference_from(Path(out_dir))
    files: dict[str, str] = {}
    too_large: list[Diagnostic] = []
    for tool in generated.tools:
        data: dict[str, Any] = dict(tool.data)
        origin = dict(data["origin"]["openapi"])
        origin["selection"] = list(selectors)
        data["origin"] = {"openapi": origin}
        rendered = type(tool)(tool.operation, data, tool.notes, tool.settings)
        text = render_tool(rendered, reference, document_name)
        if len(text.encode("utf-8")) > MAX_SOURCE_BYTES:
            too_large.append(root.error(tool.operation.json_path, "openapi-too-large",
                                        f"{tool.operation.key.label} would be a file over "
                                        f"{MAX_SOURCE_BYTES} bytes, more than capc reads"))
        files[f"{tool.operation.code}.yaml"] = text
    if too_large:
        raise ImportRefused(tuple(too_large))
    return files


def _tree_problems(files: dict[str, str], out_dir: str, existing: GeneratedFiles,
                   request: OpenApiRequest) -> list[Diagnostic]:
    """Files in the way, then the errors of the tree as it would be after the import."""
    from compiler.pipeline import compile_documents
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files, parse_source

    problems: list[Diagnostic] = []
    for name in sorted(files):
        target = Path(out_dir, name)
        if target.exists() and target.as_posix() not in existing.paths and not request.force:
            problems.append(Diagnostic.error(
                Location(target.as_posix()), "import-exists",
                "exists and was not generated by `capc import openapi`; pass --force to "
                "replace it"))
    if problems:
        return problems
    replaced = {os.path.realpath(Path(out_dir, name)) for name in files}
    roots = sorted({*request.roots, out_dir})
    present = [r for r in roots if os.path.exists(r)]
    documents, _ = load_files(discover(present)) if present else ([], [])
    kept = [d for d in documents if os.path.realpath(d.path) not in replaced]
    for name, text in files.items():
        parsed, loading = parse_source(Path(out_dir, name).as_posix(), text.encode("utf-8"), {})
        kept += parsed
        problems += [d for d in loading if d.is_error]
    kept.sort(key=lambda d: (d.path, d.index))
    options = CompileOptions(allow_private_networks=request.allow_private_networks)
    problems += [d for d in compile_documents(kept, options).diagnostics if d.is_error]
    return problems


def _write(files: dict[str, str], out_dir: str) -> list[str]:
    """Write every file (each atomically); the names are codes, so none leaves out_dir."""
    from compiler.manifest import write_atomically

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for name, text in sorted(files.items()):
        target = folder / name
        if target.parent != folder or "/" in name or "\\" in name:  # codes never do this
            continue
        write_atomically(target, text.encode("utf-8"))
        written.append(target.as_posix())
    return written


def _summary(generated: Generated, written: list[str], existing: GeneratedFiles,
             files: dict[str, str]) -> tuple[str, ...]:
    lines = list(written)
    settings = sorted({(s.name, s.meaning) for tool in generated.tools for s in tool.settings})
    if settings:
        lines.append("settings to create (their values are never written in the files):")
        lines += [f"  {name}: {meaning}" for name, meaning in settings]
    stale = sorted(p for p in existing.paths if Path(p).name not in files)
    if stale:
        lines.append("generated earlier, not by this import (remove them if they are gone):")
        lines += [f"  {path}" for path in stale]
    noted = sum(1 for tool in generated.tools if tool.notes)
    lines.append(f"{len(written)} tools written, {len(generated.skipped)} operations "
                 f"skipped, {noted} with notes on what could not be kept (see their comments)")
    return tuple(lines)
