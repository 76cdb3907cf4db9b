"""``capc import`` into a tree that already holds capabilities: the result must still compile.

A code the tree already defines is refused, or with ``--force`` replaced: the file that
defines it is overwritten (same path) or removed (a single-document file elsewhere); a
code inside a multi-document file is never edited behind the author's back. Then the
tree as it would be after the import is compiled, and any error stops the import.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compiler.authoring.importer import ImportResult
from compiler.authoring.tree import codes_of
from compiler.compile_result import CompileOptions
from compiler.diagnostics import Diagnostic
from compiler.source.documents import SourceDocument


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Files ``--force`` removes (their codes are re-imported elsewhere), and the problems
    that stop the import (empty: write)."""

    removed: tuple[Path, ...]
    problems: tuple[Diagnostic, ...]


def plan_import(result: ImportResult, out_dir: str, tree_roots: Sequence[str], *,
                force: bool, options: CompileOptions | None = None) -> ImportPlan:
    """Check ``result`` against the tree under ``tree_roots`` (and ``out_dir``)."""
    from compiler.pipeline import compile_documents
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files, parse_source

    roots = sorted({*tree_roots, out_dir})
    present = [root for root in roots if os.path.exists(root)]
    documents, _ = load_files(discover(present)) if present else ([], [])
    targets = {_key(Path(out_dir) / f.relative_path): f for f in result.files}
    by_file: dict[str, list[SourceDocument]] = {}
    for document in documents:
        by_file.setdefault(document.path, []).append(document)
    problems: list[Diagnostic] = []
    removed: list[Path] = []
    incoming = {f.filename.removesuffix(".yaml"): f for f in result.files}
    for path, in_file in sorted(by_file.items()):
        clashing = [(d, code) for d in in_file for code in codes_of(d.data) if code in incoming]
        if not clashing or (force and len(in_file) == 1 and _key(Path(path)) in targets):
            continue
        for document, code in clashing:
            where = document.location(("code",))
            if not force:
                problems.append(Diagnostic.error(
                    where, "import-code-exists",
                    f"code {code!r} is already defined here; `capc import` would define it "
                    f"again in {_shown(out_dir, incoming[code].relative_path)} (pass --force "
                    "to replace this definition)"))
            elif len(in_file) > 1:
                problems.append(Diagnostic.error(
                    where, "import-code-exists",
                    f"code {code!r} is defined in this file with other documents: remove it "
                    "here first (--force replaces whole files only)"))
        if force and len(in_file) == 1:
            removed.append(Path(path))
    if problems:
        return ImportPlan((), tuple(problems))
    replaced = {_key(path) for path in removed} | set(targets)
    kept = [d for d in documents if _key(Path(d.path)) not in replaced]
    for imported in result.files:
        shown = _shown(out_dir, imported.relative_path)
        parsed, _ = parse_source(shown, imported.text.encode("utf-8"), {})
        kept += parsed
    kept.sort(key=lambda d: (d.path, d.index))  # the order a compile of the tree uses
    errors = [d for d in compile_documents(kept, options).diagnostics if d.is_error]
    return ImportPlan(tuple(removed), tuple(errors))


def _shown(out_dir: str, relative: str) -> str:
    return Path(os.path.normpath(os.path.join(out_dir, relative))).as_posix()


def _key(path: Path) -> str:
    return os.path.normcase(os.path.realpath(path))
