"""The capability checks' findings per file, kept so an edit re-checks only what changed.

Every check of a schema-valid capability document (``pipeline._check_capabilities``:
``when`` conditions, scaffold placeholders, the api, MCP and internal checks) reads that
document and the compile's options only, and locates what it finds in that document. So
what the checks found in a file is a function of the file's key (its display path and the
SHA-256 of its bytes: compiler/cache/store.py) and the options, which are part of the
tree's identity. This entry keeps those findings per file key; the next compile of the
tree checks only the documents of files it does not know and takes the rest from here.
Likewise whether every document of a file passed classification and its schema
(``schema.validation.validate_document`` reads the document alone): such a file's
documents are not validated again.

What stays exact and global is never kept: classification, a schema check that failed,
duplicate names and codes, overrides, pins, profiles
and their budgets, plugin failures and tool tests all run on the whole tree each time.

A finding located outside the files being checked (none is today) would make the
attribution to files unsound: then nothing is stored. Templates are never kept (their
documents depend on the variables, which a file key does not cover).
tests/cache/test_check_memo.py proves a memoized compile equal to a full one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from compiler.cache.file_packs import diagnostic_from_plain, diagnostic_to_plain
from compiler.diagnostics import Diagnostic

if TYPE_CHECKING:
    from compiler.cache.store import CompileCache
    from compiler.source.discovery import SourceFile

ENTRY_KIND = "checks"


class CheckMemo:
    """One compile's memo of capability-check findings, by display path (see the module).

    Not frozen: the compile records what it checked (one object per compile, never
    shared between compiles).
    """

    __slots__ = ("clean", "failed", "found", "known", "spoiled")

    def __init__(self, known: Mapping[str, list[Diagnostic]],
                 clean: frozenset[str] = frozenset()) -> None:
        self.known = known
        self.clean = clean  # known files each of whose documents passed its schema
        self.found: dict[str, list[Diagnostic]] = {}
        self.failed: set[str] = set()  # files with a document that did not
        self.spoiled = False

    def record(self, paths: Iterable[str], diagnostics: Sequence[Diagnostic]) -> None:
        """Note what checking the documents of the files at ``paths`` found."""
        found: dict[str, list[Diagnostic]] = {path: [] for path in paths
                                               if path not in self.known}
        self.found.update(found)
        for diagnostic in diagnostics:
            into = found.get(diagnostic.path)
            if into is None:
                self.spoiled = True
            else:
                into.append(diagnostic)

    def recalled(self, paths: Iterable[str]) -> list[Diagnostic]:
        """What the known files among ``paths`` were found to have (each file once)."""
        recalled: list[Diagnostic] = []
        for path in dict.fromkeys(paths):
            recalled += self.known.get(path, ())
        return recalled


def read_memo(store: CompileCache, files: Sequence[SourceFile],
              file_keys: Sequence[str | None]) -> CheckMemo:
    """The memo of the tree's stored findings for the files whose key is unchanged."""
    stored = store.read_entry(ENTRY_KIND)
    known: dict[str, list[Diagnostic]] = {}
    clean: set[str] = set()
    if stored is not None:
        try:
            by_key: dict[str, Any] = stored[0]
            for source, key in zip(files, file_keys, strict=True):
                kept = by_key.get(key) if key is not None and not source.is_template else None
                if kept is not None:
                    passed, plain = kept
                    known[source.display_path] = [diagnostic_from_plain(item) for item in plain]
                    if passed is True:
                        clean.add(source.display_path)
        except (TypeError, ValueError, AttributeError):
            known, clean = {}, set()
    return CheckMemo(known, frozenset(clean))


def write_memo(store: CompileCache, memo: CheckMemo, files: Sequence[SourceFile],
               file_keys: Sequence[str | None]) -> None:
    """Store the findings of every file of the tree (when something new was checked)."""
    if memo.spoiled or (not memo.found and len(memo.known) == len(files)):
        return
    by_key: dict[str, tuple[bool, list[Any]]] = {}
    for source, key in zip(files, file_keys, strict=True):
        if key is None or source.is_template:
            continue
        path = source.display_path
        findings = memo.known[path] if path in memo.known else memo.found.get(path, [])
        passed = path in memo.clean or (path not in memo.known and path not in memo.failed)
        by_key[key] = (passed, [diagnostic_to_plain(d) for d in findings])
    store.write_entry(ENTRY_KIND, by_key)
