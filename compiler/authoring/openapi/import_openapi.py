"""``capc import openapi``: read, select, generate, check the tree, then write (or compare).

Every stage before writing can refuse; nothing is written unless the tree as it would be
after the import compiles without errors, checked by the one compile entry point
(:func:`compiler.tree_compile.compile_tree`, the generated files in memory) with the
project's options: the verdict is the next ``capc compile``'s. Files go into one folder;
a file there that a previous import generated (it has ``origin.openapi``) is regenerated,
a file generated from another document, or not generated at all, is refused unless
``--replace`` (``--force``). ``--server`` and ``--security`` are recorded in the files'
header, so ``--check`` regenerates with them without the flags.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.authoring.openapi.document import DocumentFile, read_document_file
from compiler.authoring.openapi.existing import (
    GeneratedFiles,
    document_record,
    read_generated,
    recorded_document,
    same_document,
)
from compiler.authoring.openapi.generate import Generated, ImportSettings, document_info, generate
from compiler.authoring.openapi.naming import folder_name
from compiler.authoring.openapi.operations import (
    Operation,
    list_operations,
    select_operations,
)
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.render import render_tool
from compiler.authoring.openapi.security import (
    checked_security,
    recorded_security,
    with_recorded_security,
)
from compiler.authoring.openapi.server_choice import (
    checked_server,
    prefer_https,
    recorded_server,
    server_lines,
    with_recorded_server,
)
from compiler.authoring.openapi.sinks import settings_to_create
from compiler.authoring.openapi.validate import check_version, validate_document
from compiler.compile_result import CompileOptions, TreeOverlay
from compiler.diagnostics import Diagnostic, Location
from compiler.errors import ExitCode
from compiler.source.safe_read import MAX_SOURCE_BYTES
from compiler.tree_compile import CompileRequest, compile_options_for, compile_tree, covering

ALL = "--all"


@dataclass(frozen=True, slots=True)
class OpenApiRequest:
    """The flags of one ``capc import openapi`` run."""

    spec: str
    output_dir: str | None = None
    selectors: tuple[str, ...] = ()
    take_all: bool = False
    server: str | None = None
    # --security NAME...: the document's security schemes to send (empty: the first).
    security: tuple[str, ...] = ()
    check: bool = False
    force: bool = False
    # The compile that checks the tree (its sources: the tree's roots, default [tool.capc]
    # roots) and its options (default: compile_options_for(tree), as `capc compile`).
    tree: CompileRequest = field(default_factory=CompileRequest)
    options: CompileOptions | None = None
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
        outcome = _run(request)
    except ImportRefused as refused:
        return Outcome(refused.exit_code, (), refused.diagnostics)
    # Paths, ids, URLs and enum values in summaries and --check reports come from the
    # document: no terminal control, bidi override or C1 code reaches the terminal.
    from compiler.report.escape import escape_control

    keep = request.output_format == "json"  # indented JSON text: its own line breaks
    return Outcome(outcome.exit_code, tuple(escape_control(line, keep_newlines=keep)
                                            for line in outcome.lines),
                   outcome.diagnostics, outcome.written)


def _run(request: OpenApiRequest) -> Outcome:
    real = Path(os.path.realpath(request.spec))
    shown = request.spec
    if not real.is_file():
        problem = ("not a regular file (SPEC is a local file)" if real.exists()
                   else "no such file (SPEC is a local file)")
        raise ImportRefused((Diagnostic.error(Location(shown), "openapi-read", problem),),
                            ExitCode.USAGE)
    root, warnings = read_openapi(real, shown)
    root, server_notes = prefer_https(root)
    operations = list_operations(root)
    title, _ = document_info(root)
    out_dir = request.output_dir or Path(_roots(request)[0], folder_name(title)).as_posix()
    existing = read_generated(out_dir)
    selectors = _selectors(request, existing)
    if request.check and not selectors:
        raise ImportRefused((Diagnostic.error(
            Location(out_dir), "openapi-check-empty",
            "no file generated by `capc import openapi` here to check: import first, or "
            "pass the selection (--operations, --all)"),))
    if not selectors:
        return Outcome(0, _listing(operations, request.output_format), tuple(warnings))
    chosen = operations if ALL in selectors else select_operations(
        operations, [s for s in selectors if s != ALL], root)
    server = checked_server(request.server or (recorded_server(existing)
                                               if request.check else None))
    security = checked_security(root.data, request.security or (
        recorded_security(existing.texts) if request.check else ()))
    options = request.options or compile_options_for(request.tree, request.output_format)
    generated = generate(root, chosen, _generation_settings(server, security, options),
                         request.progress)
    warnings += _generation_warnings(generated.warnings, options)
    warnings += [root.warning(s.operation.json_path, "openapi-skipped",
                              f"{s.operation.key.label} not imported: {s.reason}")
                 for s in generated.skipped]
    from compiler.project import find_project_root

    record = document_record(request.spec, out_dir, find_project_root())
    files = _render(root, generated, out_dir, record, selectors, (server, security))
    if request.check:
        from compiler.authoring.openapi.regeneration import drift_report

        report = drift_report(existing, files, out_dir)
        printed: tuple[str, ...] = ((report.as_json(),) if request.output_format == "json"
                                    else report.lines)
        errors = _compile_errors(files, out_dir, request, options)
        return Outcome(1 if report.changed or errors else 0, printed, (*warnings, *errors))
    problems = _tree_problems(files, out_dir, existing, request, options, record)
    if problems:
        return Outcome(1, (), (*warnings, *problems))
    written = _write(files, out_dir)
    return Outcome(0, (*_summary(generated, written, existing, files),
                       *_older_lines(existing, files, out_dir),
                       *server_lines(server, server_notes), *_security_lines(security)),
                   tuple(warnings), tuple(written))


def _roots(request: OpenApiRequest) -> tuple[str, ...]:
    """The roots of the tree the import writes into (its first: the default folder)."""
    from compiler.project import read_project_settings

    return request.tree.sources or read_project_settings().roots


def _generation_settings(server: str | None, security: tuple[str, ...],
                         options: CompileOptions) -> ImportSettings:
    """What the mapping is told: a private server is left to the compile to judge when the
    project allows some private ranges (``allowed_networks``), as ``capc compile`` does."""
    return ImportSettings(server, options.allow_private_networks
                          or bool(options.allowed_networks), security)


def _generation_warnings(warnings: Sequence[Diagnostic], options: CompileOptions
                         ) -> list[Diagnostic]:
    """The mapping's warnings, without "allowed by --allow-private-networks" when it was
    not: then the compile's verdict on the address (allowed_networks) is the one shown."""
    if options.allow_private_networks:
        return list(warnings)
    return [warning for warning in warnings if warning.code != "url-private-address"]


def read_openapi(real: Path, shown: str) -> tuple[DocumentFile, list[Diagnostic]]:
    """The document, checked and validated (Swagger 2.0 converted), and the warnings."""
    root = read_document_file(real, shown)
    version = check_version(root)
    warnings = list(validate_document(root))
    if version == "2.0":
        root = _as_openapi3(root)
        warnings.append(root.warning(("swagger",), "openapi-swagger2",
                                     "Swagger 2.0: read as the OpenAPI 3.0 it means"))
    return root, warnings


def _as_openapi3(root: DocumentFile) -> DocumentFile:
    """The Swagger 2.0 document converted in memory; its text (for positions) and sha256
    stay the original's."""
    from compiler.authoring.openapi.swagger2 import convert_swagger2

    try:
        converted = convert_swagger2(root.data)
    except RecursionError:
        raise ImportRefused((root.error((), "openapi-too-deep",
                                        "the document is nested too deeply to convert"),)
                            ) from None
    return DocumentFile(root.shown, root.real, root.text, converted, root.sha256)


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
        return (json.dumps(rows, indent=2),)  # ASCII: every control character escaped
    from compiler.authoring.openapi.render import comment_line

    lines = [f"{len(operations)} operations; choose with --operations ID|'METHOD /path'|"
             "tag:NAME (globs allowed) or --all:"]
    for op in operations:
        summary = comment_line(op.summary)[:80]
        lines.append(f"  {op.key.operation_id or '-':40} {op.key.label:50} {summary}".rstrip())
    return tuple(lines)


def _render(root: DocumentFile, generated: Generated, out_dir: str, record: str,
            selectors: tuple[str, ...], recorded: tuple[str | None, tuple[str, ...]]
            ) -> dict[str, str]:
    """Each tool's file text by name; ``recorded``: the ``--server`` and ``--security``
    the header records."""
    from compiler.authoring.tree import schema_reference_from

    reference = schema_reference_from(Path(out_dir))
    files: dict[str, str] = {}
    too_large: list[Diagnostic] = []
    for tool in generated.tools:
        data: dict[str, Any] = dict(tool.data)
        origin = dict(data["origin"]["openapi"])
        # Sorted: the same files (and a clean --check) whatever the order of --operations.
        origin["selection"] = sorted(set(selectors))
        data["origin"] = {"openapi": origin}
        rendered = type(tool)(tool.operation, data, tool.notes, tool.settings)
        text = with_recorded_server(with_recorded_security(
            render_tool(rendered, reference, record), recorded[1]), recorded[0])
        if len(text.encode("utf-8")) > MAX_SOURCE_BYTES:
            too_large.append(root.error(tool.operation.json_path, "openapi-too-large",
                                        f"{tool.operation.key.label} would be a file over "
                                        f"{MAX_SOURCE_BYTES} bytes, more than capc reads"))
        files[f"{tool.operation.code}.yaml"] = text
    if too_large:
        raise ImportRefused(tuple(too_large))
    return files


def _tree_problems(files: dict[str, str], out_dir: str, existing: GeneratedFiles,
                   request: OpenApiRequest, options: CompileOptions, record: str
                   ) -> list[Diagnostic]:
    """Files in the way, then the errors of the tree as it would be after the import."""
    problems: list[Diagnostic] = [] if request.force else _in_the_way(files, out_dir,
                                                                      existing, record)
    return problems or _compile_errors(files, out_dir, request, options)


def _in_the_way(files: dict[str, str], out_dir: str, existing: GeneratedFiles,
                record: str) -> list[Diagnostic]:
    """Files the import would replace that are not this document's: hand-written ones,
    and those another document generated (a re-import never silently replaces them)."""
    from compiler.report.escape import escape_control

    way_out = (f"import into another folder (-o DIR), or pass --replace to replace "
               f"{'them' if len(files) > 1 else 'it'} with {escape_control(record)}'s")
    problems: list[Diagnostic] = []
    for name in sorted(files):
        target = Path(out_dir, name).as_posix()
        if not Path(target).exists():
            continue
        if target not in existing.paths:
            problems.append(Diagnostic.error(
                Location(target), "import-exists",
                f"exists and was not generated by `capc import openapi` (importing "
                f"{escape_control(record)} would replace it): {way_out}"))
            continue
        said = recorded_document(existing.texts[target])
        if not same_document(said.record, record):
            problems.append(Diagnostic.error(
                Location(target, said.line, 1), "openapi-other-document",
                f"generated from {escape_control(said.record or '?')}, not from "
                f"{escape_control(record)}: importing would replace it; {way_out}"))
    return problems


def _compile_errors(files: dict[str, str], out_dir: str, request: OpenApiRequest,
                    options: CompileOptions) -> list[Diagnostic]:
    """The errors of the project's tree with ``files`` written into ``out_dir`` (in memory):
    what the next ``capc compile`` would say (warnings too, under strict)."""
    overlay = TreeOverlay.of({Path(out_dir, name).as_posix(): text.encode("utf-8")
                              for name, text in files.items()})
    if not files:
        return []  # nothing written: the tree stays as it is
    compiled = compile_tree(covering(request.tree, out_dir), overlay, options=options)
    return [d for d in compiled.diagnostics if d.is_error]


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
    settings = settings_to_create(generated.tools)
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


def _older_lines(existing: GeneratedFiles, files: dict[str, str], out_dir: str
                 ) -> tuple[str, ...]:
    """A note on regenerated files an older capc wrote without naming their document."""
    older = sorted(name for name in files
                   if (text := existing.texts.get(Path(out_dir, name).as_posix()))
                   is not None and "/" not in (recorded_document(text).record or ""))
    if not older:
        return ()
    return (f"{len(older)} files did not name their document by its path (an older import): "
            "taken as this document's and regenerated; they name it now",)


def _security_lines(security: tuple[str, ...]) -> tuple[str, ...]:
    """What the import's summary says of ``--security``."""
    if not security:
        return ()
    return (f"security: {', '.join(security)} (--security, recorded in the files: --check "
            "needs no flag)",)
