"""The source files of a tree as an in-memory overlay would leave it (``capc import`` and
other commands that check what they would write, without writing it)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.source.discovery import SOURCE_SUFFIXES, SourceFile, discover, display_path

if TYPE_CHECKING:
    from compiler.compile_result import TreeOverlay


def list_tree(roots: Sequence[str], cwd: Path | None, overlay: TreeOverlay | None,
              folders: list[str] | None = None
              ) -> tuple[list[SourceFile], dict[str, bytes], dict[str, Any]]:
    """The sources of the tree under ``roots`` as ``overlay`` would leave it, the bytes
    of those it gives and the data of those capc wrote (by display path). A root that
    does not exist yet but holds a file of the overlay is not looked for on disk."""
    if not overlay:
        return discover(list(roots), cwd, folders), {}, {}
    real_roots = [os.path.realpath(root) for root in roots]
    placed = {path: _located(path) for path in overlay.files}
    on_disk = [root for root, real in zip(roots, real_roots, strict=True)
               if os.path.exists(root)
               or not any(_root_of(located, [real]) for located in placed.values())]
    deleted = {display_path(Path(path), cwd) for path in overlay.deleted}
    found = {source.display_path: source for source in discover(on_disk, cwd)
             if source.display_path not in deleted}
    given: dict[str, bytes] = {}
    written: dict[str, Any] = {}
    for path, raw in overlay.files.items():
        tree = _root_of(placed[path], real_roots)
        if tree is None:
            continue  # outside the roots: not part of the tree once written either
        shown = display_path(Path(path), cwd)
        found[shown] = SourceFile(str(Path(path)), shown, tree)
        given[shown] = raw
        if path in overlay.written:
            written[shown] = overlay.written[path]
    return [found[key] for key in sorted(found)], given, written


def _located(path: str) -> str:
    """``path`` absolute with its folder resolved (its name kept), as discovery shows it."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


def _root_of(located: str, real_roots: Sequence[str]) -> str | None:
    """The root ``located`` is a source of (discovery's rule: a source suffix, no hidden
    entry below the root), or None."""
    if not os.path.basename(located).endswith(SOURCE_SUFFIXES):
        return None
    for root in real_roots:
        if located == root:
            return root
        below = os.path.relpath(located, root)
        if not below.startswith(os.pardir) and not any(
                part.startswith(".") for part in below.split(os.sep)):
            return root
    return None
