"""``capc import``: read an export, choose its rows, compile, write; what it prints.

The flags become one :class:`ImportRequest`; :func:`run_import` returns an
:class:`ImportOutcome` (lines and diagnostics to print, the exit code) and writes the
files only when everything that is written compiles with the project's own options.
Exit codes: 0 written; 1 nothing written (errors), or written with rows skipped
(``--skip-invalid``); 2 the export cannot be read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from compiler.authoring.import_tree import plan_import
from compiler.authoring.importer import (
    ImportResult,
    import_selected,
    read_export,
    row_label,
    row_positions,
    write_imported,
)
from compiler.authoring.row_selection import select_rows
from compiler.authoring.tree import schema_reference_from
from compiler.compile_result import CompileOptions
from compiler.diagnostics import Code, Diagnostic, Location, has_errors
from compiler.errors import InputOutputError
from compiler.tree_compile import CompileRequest

IMPORT_GROUPS = Code("import-groups", "no imported row belongs to the selected group")
CODES = (IMPORT_GROUPS,)

EXIT_OK, EXIT_PROBLEMS = 0, 1


@dataclass(frozen=True, slots=True)
class ImportRequest:
    """What the flags of ``capc import`` ask for."""

    rows_file: str
    output_dir: str = "capabilities"
    force: bool = False
    group: str | None = None
    by_group: bool = False
    skip_invalid: bool = False


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What ``capc import`` prints (stdout: written paths; stderr: the summary), the
    diagnostics to report, the exit code, and the trees written (for editor schemas)."""

    exit_code: int
    out: tuple[str, ...] = ()
    err: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    wrote: bool = False


def run_import(request: ImportRequest, options: CompileOptions,
               tree: CompileRequest | None = None) -> ImportOutcome:
    """Import ``request.rows_file``: every tree it makes (``tree``, the project's by
    default, with the files in memory) must compile with ``options`` (from
    :func:`compiler.tree_compile.compile_options_for`), else nothing is written."""
    try:
        text = Path(request.rows_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise InputOutputError(f"{request.rows_file}: cannot read: {reason}") from None
    tree = tree or CompileRequest()
    rows, unreadable = read_export(text, request.rows_file)
    if unreadable is not None:
        return ImportOutcome(EXIT_PROBLEMS, diagnostics=(unreadable,))
    selection, problems = select_rows(rows, row_label, group=request.group,
                                      by_group=request.by_group)
    err = [f"capc import: left out soft-deleted {line}" for line in selection.deleted]
    if problems:
        located = tuple(Diagnostic.error(Location(request.rows_file), IMPORT_GROUPS, p)
                        for p in problems)
        return ImportOutcome(EXIT_PROBLEMS, err=tuple(err), diagnostics=located)
    positions = row_positions(text)
    planned: list[tuple[str, ImportResult, CompileRequest]] = []
    diagnostics: list[Diagnostic] = []
    for group, chosen in sorted(selection.groups.items(), key=lambda item: item[0] or ""):
        # Under --by-group each group is a tree of its own, compiled on its own.
        target = (os.path.join(request.output_dir, group) if request.by_group and group
                  else request.output_dir)
        group_tree = replace(tree, sources=(target,)) if request.by_group else tree
        result = import_selected(chosen, positions, request.rows_file,
                                 schema_reference_from(Path(target)), options,
                                 skip_invalid=request.skip_invalid)
        diagnostics += [*result.diagnostics, *result.skipped]
        planned.append((target, result, group_tree))
    if has_errors(tuple(d for _, r, _ in planned for d in r.diagnostics)):
        return ImportOutcome(EXIT_PROBLEMS, err=tuple(err), diagnostics=tuple(diagnostics))
    plans = []
    for target, result, group_tree in planned:
        plan = plan_import(result, target, group_tree, force=request.force, options=options)
        diagnostics += plan.problems
        plans.append(plan)
    if any(plan.problems for plan in plans):
        return ImportOutcome(EXIT_PROBLEMS, err=tuple(err), diagnostics=tuple(diagnostics))
    out: list[str] = []
    for (target, result, _), plan in zip(planned, plans, strict=True):
        for replaced in plan.removed:
            replaced.unlink()
            err.append(f"capc import: replaced {replaced.as_posix()}")
        written, write_problems = write_imported(result, target, force=request.force)
        out += written
        diagnostics += write_problems
        if write_problems:
            return ImportOutcome(EXIT_PROBLEMS, tuple(out), tuple(err), tuple(diagnostics),
                                 bool(out))
    err += _summary(planned, request)
    skipped = any(result.skipped for _, result, _ in planned)
    return ImportOutcome(EXIT_PROBLEMS if skipped else EXIT_OK, tuple(out), tuple(err),
                         tuple(diagnostics), bool(out))


def _summary(planned: Sequence[tuple[str, ImportResult, CompileRequest]],
             request: ImportRequest) -> list[str]:
    """The settings to create, the trees written and (by group) how CI builds them."""
    lines: list[str] = []
    secrets = [secret for _, result, _ in planned for secret in result.secrets]
    if secrets:
        lines.append("capc import: literal credentials were replaced by settings; create "
                     "these (their values were not written anywhere):")
        seen: set[str] = set()
        for secret in secrets:
            if secret.setting not in seen:
                seen.add(secret.setting)
                lines.append(f"  {secret.setting}  ({secret.where} of {secret.code})")
    skipped = len({(d.path, d.line, d.col) for _, result, _ in planned for d in result.skipped})
    if skipped:
        lines.append(f"capc import: --skip-invalid left out {skipped} problem row(s) listed "
                     "above; the other rows were written")
    if request.by_group:
        for target, result, _ in planned:
            lines.append(f"capc import: group tree {target} ({len(result.files)} file(s)): "
                         f"capc compile {target} -o build/{os.path.basename(target)}/"
                         "manifest.json")
    return lines
