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
from compiler.checks.url_rules import PLAIN_HTTP_SECRET
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
    """The files to write, one warning per operation dropped, the errors left (empty: the
    tree with ``files`` compiles) and the compile's warnings in ``files``."""

    files: HeldFiles
    dropped: tuple[Diagnostic, ...]
    errors: tuple[Diagnostic, ...]
    warnings: tuple[Diagnostic, ...] = ()


def drop_refused_tools(files: HeldFiles, out_dir: str,
                       compile_tree: Callable[[HeldFiles], list[Diagnostic]],
                       skipped: Callable[[str, str], Diagnostic | None]) -> CompiledTree:
    """Compile the tree with ``files`` (file name → bytes, in ``out_dir``); drop the files
    its errors are in while every error is in one of them, and compile again.

    ``compile_tree(files)``: the tree's diagnostics with those files; ``skipped(name,
    reason)``: the warning saying the operation of file ``name`` was not imported.
    """
    kept = files
    dropped: list[Diagnostic] = []
    for _ in range(MAX_COMPILES):
        found = compile_tree(kept)
        errors = [d for d in found if d.is_error]
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
        found = compile_tree(kept)
        errors = [d for d in found if d.is_error]
    ours = {os.path.realpath(Path(out_dir, name)) for name in kept}
    return CompiledTree(kept, tuple(dropped), tuple(errors), tuple(
        d for d in found if not d.is_error and d.path and os.path.realpath(d.path) in ours))


def warned_lines(warnings: Sequence[Diagnostic]) -> tuple[str, ...]:
    """What the import's summary says of the compile's warnings on the files it wrote: how
    many tools each code concerns, once per code (``capc compile`` lists each, and
    ``--strict`` refuses them: an import should not leave that to be found in CI)."""
    by_code: dict[str, list[Diagnostic]] = {}
    for warning in warnings:
        by_code.setdefault(warning.code, []).append(warning)
    if not by_code:
        return ()
    tools = len({warning.path for warning in warnings})
    lines = [f"{tools} tool{'s' if tools != 1 else ''} with warnings that `capc compile "
             "--strict` refuses (`capc compile` lists each):"]
    for code, found in sorted(by_code.items()):
        count = len({warning.path for warning in found})
        first = found[0].message[:_MAX_REASON]
        lines.append(f"  {code} ({count} tool{'s' if count != 1 else ''}): {first}"
                     f"{_WAY_OUT.get(code, '')}")
    return tuple(lines)


# What to do about a warning, when the import can say better than the compile.
_WAY_OUT = {PLAIN_HTTP_SECRET.id: "; if the API also serves https, import again with "
                                  "--server and its https URL (recorded in the files)"}


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
