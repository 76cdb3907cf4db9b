"""``capc import`` into a tree that already holds capabilities: the result must still compile.

A code the tree already defines is refused, or with ``--force`` replaced: the file that
defines it is overwritten (same path) or removed (a single-document file elsewhere); a
code inside a multi-document file is never edited behind the author's back. Then the
tree as it would be after the import is compiled (:func:`compiler.tree_compile.compile_tree`
with the files in memory: the project's variables, plugins, lock, networks and strictness),
and any error stops the import.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from compiler.authoring.importer import ImportResult
from compiler.authoring.tree import codes_of
from compiler.compile_result import CompileOptions, TreeOverlay
from compiler.diagnostics import Code, Diagnostic
from compiler.project import read_project_settings
from compiler.source.documents import SourceDocument
from compiler.tree_compile import CompileRequest, compile_tree, covering

IMPORT_CODE_EXISTS = Code("import-code-exists", "an imported code is already defined in the tree")
CODES = (IMPORT_CODE_EXISTS,)


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Files ``--force`` removes (their codes are re-imported elsewhere), and the problems
    that stop the import (empty: write)."""

    removed: tuple[Path, ...]
    problems: tuple[Diagnostic, ...]


def plan_import(result: ImportResult, out_dir: str, tree: CompileRequest, *,
                force: bool, options: CompileOptions | None = None) -> ImportPlan:
    """Check ``result`` against the tree ``tree`` compiles (and ``out_dir``)."""
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files
    from compiler.source.templates import load_template_variables

    project = read_project_settings()
    tree = covering(tree, out_dir)
    roots = sorted({*(tree.sources or project.roots), out_dir})
    present = [root for root in roots if os.path.exists(root)]
    # With the variables, so a template's code is seen too (its problems: the compile's).
    variables, _ = load_template_variables(list(tree.variables or project.variables))
    documents, _ = load_files(discover(present), variables) if present else ([], [])
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
                    where, IMPORT_CODE_EXISTS,
                    f"code {code!r} is already defined here; `capc import` would define it "
                    f"again in {_shown(out_dir, incoming[code].relative_path)} (pass --force "
                    "to replace this definition)"))
            elif len(in_file) > 1:
                problems.append(Diagnostic.error(
                    where, IMPORT_CODE_EXISTS,
                    f"code {code!r} is defined in this file with other documents: remove it "
                    "here first (--force replaces whole files only)"))
        if force and len(in_file) == 1:
            removed.append(Path(path))
    if problems:
        return ImportPlan((), tuple(problems))
    overlay = TreeOverlay.of(
        {_shown(out_dir, f.relative_path): f.text.encode("utf-8") for f in result.files},
        frozenset(path.as_posix() for path in removed))
    if not overlay:
        return ImportPlan((), ())  # nothing written: the tree stays as it is
    compiled = compile_tree(tree, overlay, options=options)
    return ImportPlan(tuple(removed), tuple(d for d in compiled.diagnostics if d.is_error))


def _shown(out_dir: str, relative: str) -> str:
    return Path(os.path.normpath(os.path.join(out_dir, relative))).as_posix()


def _key(path: Path) -> str:
    return os.path.normcase(os.path.realpath(path))
