"""The tree's compile refuses some generated tools: those operations are left out, the rest
checked again (issue 35: one bad operation never refuses the whole document).

The import's verdict is the project's compile's (:func:`compiler.tree_compile.compile_tree`
on the tree with the generated files in memory). When every error it finds sits in a file
this import would write, those files are dropped, each operation reported as skipped with
the compile's first reason, located at the operation in the document (the file is never
written, so its line would point nowhere); the smaller tree is compiled again, so the
import still never writes a tree its compile refuses, nor a partial one. An error anywhere
else (a hand-written file, the project), or a name a generated file shares with another
capability, refuses the import as before, nothing dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from compiler.authoring.openapi.generated_tree import HeldFiles
from compiler.checks import final_names, names
from compiler.diagnostics import Diagnostic

# Compiles of the tree at most: the first, then after each drop. Dropping a tool's file
# removes its own errors, so the second compile is clean unless tools refuse each other.
MAX_COMPILES = 3
_MAX_REASON = 300
# Errors about a name another capability of the tree also takes (a code or tool name
# clash with a hand-written file): the tree's problem, not the operation's; refused whole.
_TREE_CODES = frozenset(code.id for code in (*names.CODES, *final_names.CODES))


@dataclass(frozen=True, slots=True)
class CompiledTree:
    """The files to write, one warning per operation dropped, and the errors left (empty:
    the tree with ``files`` compiles)."""

    files: HeldFiles
    dropped: tuple[Diagnostic, ...]
    errors: tuple[Diagnostic, ...]


def drop_refused_tools(files: HeldFiles, out_dir: str,
                       compile_errors: Callable[[HeldFiles], list[Diagnostic]],
                       skipped: Callable[[str, str], Diagnostic | None]) -> CompiledTree:
    """Compile the tree with ``files`` (file name → bytes, in ``out_dir``); drop the files
    its errors are in while every error is in one of them, and compile again.

    ``compile_errors(files)``: the tree's errors with those files; ``skipped(name,
    reason)``: the warning saying the operation of file ``name`` was not imported.
    """
    kept = files
    dropped: list[Diagnostic] = []
    for _ in range(MAX_COMPILES):
        errors = compile_errors(kept)
        refused = _by_file(errors, kept, out_dir)
        if not errors or refused is None or len(refused) == len(kept):
            break
        kept = kept.without(set(refused))
        for name, first in refused.items():
            reason = f"its tool does not compile: {first.code}: {first.message}"
            warning = skipped(name, reason[:_MAX_REASON])
            if warning is not None:
                dropped.append(warning)
    else:
        errors = compile_errors(kept)
    return CompiledTree(kept, tuple(dropped), tuple(errors))


def _by_file(errors: Sequence[Diagnostic], files: Mapping[str, bytes], out_dir: str
             ) -> dict[str, Diagnostic] | None:
    """Each file of ``files`` with an error, and its first; None when an error is in no
    such file, or names a clash with another capability (then nothing is dropped: the
    tree is refused as it is)."""
    where = {os.path.realpath(Path(out_dir, name)): name for name in files}
    found: dict[str, Diagnostic] = {}
    for error in errors:
        name = where.get(os.path.realpath(error.path)) if error.path else None
        if name is None or error.code in _TREE_CODES:
            return None
        found.setdefault(name, error)
    return found
