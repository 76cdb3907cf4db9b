"""A no-change re-compile answered from stat signatures, without listing, reading or
hashing the tree.

A cached compile still found its tree's files (one ``scandir`` per folder and, for a tree
outside the working directory, a ``realpath`` per file), read every one and hashed it,
only to compute the key of a result it already had. The index, written beside the
tree's other entries (compiler/cache/store.py) after every compile whose result is
stored, keeps what that work found: each folder discovery listed and each source file
(where it is, how it is shown, the tree it was found under) with its stat signature
(compiler/cache/read_recorder.py: device, inode, size, modification and change times)
and its file key (display path and SHA-256 of its bytes).

The next compile of the same tree (same working directory, roots and options: the
index is one of the tree's entries) re-checks those signatures instead:

- the roots resolve where they did and every listed folder has the signature it had,
  so discovery would list the same files (adding, removing or renaming an entry changes
  its folder's times); else the index is not used at all;
- a file whose signature is unchanged has the key it had; any other file is read and
  hashed as on the general path.

The tree key is then made from those keys exactly as from hashed files, so the result
served is the one the general path would find. This is the import system's trust model
(bytecode reused while its source's size and times hold), with git's answer to its one
gap: a change within one tick of a file system's clock, made just as the index is
written, could keep the same signature. So a signature is trusted only when the path's
modification and change times are older, by :data:`RACY_NS`, than the start of the
compile that wrote it; a racy file is read and hashed, a racy folder keeps the index from
being used (the compile that follows writes a trusted one). The change time cannot be set
back by a user (``touch -d`` sets the modification time only).

tests/cache/test_tree_index.py proves the indexed answer equal to the general path's
(edits, same-size rewrites, added, removed and renamed files, new folders, roots moved,
racy files, corrupt and truncated entries).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compiler.cache.read_recorder import RACY_NS, Signature, signature
from compiler.runtime.records import record

if TYPE_CHECKING:
    from compiler.cache.store import CompileCache
    from compiler.source.discovery import SourceFile

ENTRY_KIND = "index"

IndexedFile = tuple[str, str, "str | None", Signature, str]
"""(disk path, display path, resolved root it was found under, signature, file key)."""


@record(frozen=True, slots=True)
class TreeIndex:
    """What the last stored compile of a tree found, as stat signatures (the module)."""

    started_ns: int
    roots: tuple[tuple[str, str], ...]  # (root as given, where it resolved)
    folders: tuple[tuple[str, Signature], ...]
    files: tuple[IndexedFile, ...]

    def listing_holds(self, roots: Sequence[str]) -> bool:
        """Whether discovery would list the same files now: the same roots, resolving
        where they did, and every folder with its trusted signature."""
        if [root for root, _ in self.roots] != list(roots):
            return False
        if any(os.path.realpath(root) != real for root, real in self.roots):
            return False
        return all(known is not None and self.trusted(known) and signature(folder) == known
                   for folder, known in self.folders)

    def trusted(self, known: Signature) -> bool:
        """Whether ``known`` was taken long enough after the path last changed."""
        return known is not None and max(known[3], known[4]) < self.started_ns - RACY_NS

    def unchanged(self) -> list[Signature]:
        """Each file's signature when it is unchanged and trusted (its stored key holds),
        else None (the file is to be read and hashed)."""
        return [known if known is not None and self.trusted(known) and signature(path) == known
                else None for path, _, _, known, _ in self.files]


def read_index(store: CompileCache) -> TreeIndex | None:
    """The tree's stored index, or None (absent, foreign, corrupt, outdated)."""
    found = store.read_entry(ENTRY_KIND)
    if found is None:
        return None
    try:
        started_ns, roots, folders, files = found[0]
        index = TreeIndex(started_ns, tuple(map(tuple, roots)), tuple(map(tuple, folders)),
                          tuple(map(tuple, files)))
        # The shapes every use relies on (an authenticated entry of this compiler has them).
        if not (isinstance(started_ns, int)
                and all(len(item) == 2 and _is_signature(item[1]) for item in index.folders)
                and all(len(item) == 2 for item in index.roots)
                and all(len(item) == 5 and _is_signature(item[3]) for item in index.files)):
            return None
    except (TypeError, ValueError):
        return None
    return index


def write_index(store: CompileCache, started_ns: int, roots: Sequence[str],
                folders: Sequence[str], files: Sequence[SourceFile],
                file_keys: Sequence[str], signed: Sequence[Signature] | None = None) -> None:
    """Store what a compile that began at ``started_ns`` found (best effort).

    Signatures are taken now, after the files were listed and read, unless ``signed``
    gives one (checked unchanged since ``started_ns``, or taken as the file was opened
    for reading): a change since the compile began shows as a change time past
    ``started_ns``, which is never trusted, and a file changed after it was opened no
    longer has the signature kept for it.
    """
    known = signed if signed is not None else [None] * len(files)
    payload: list[Any] = [
        started_ns,
        [(root, os.path.realpath(root)) for root in roots],
        [(folder, signature(folder)) for folder in folders],
        [(source.disk_path, source.display_path, source.tree,
          checked if checked is not None else signature(source.disk_path), key)
         for source, key, checked in zip(files, file_keys, known, strict=True)]]
    store.write_entry(ENTRY_KIND, payload)


def source_files(index: TreeIndex) -> list[SourceFile]:
    """The files of ``index`` as discovery gives them (sorted by display path)."""
    from compiler.source.discovery import SourceFile

    return [SourceFile(path, shown, tree) for path, shown, tree, _, _ in index.files]


def _is_signature(value: Any) -> bool:
    return value is None or (isinstance(value, tuple) and len(value) == 5)
