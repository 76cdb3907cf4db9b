"""The I/O edge of compiling: read the tree and the variables, run the pure pipeline.

Because the pipeline is pure, its results can be reused by content: an unchanged tree
gets its whole result back from the cache, and a tree with a few edited files re-loads
only those (see compiler/cache/store.py). The cache never changes a result, only its cost.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.cache.check_memo import CheckMemo, read_memo, write_memo
from compiler.cache.entry_fragments import EntryFragments, read_fragments, write_fragments
from compiler.cache.file_packs import FileResult, PackPiece
from compiler.cache.position_answers import RecordedPositions
from compiler.cache.read_recorder import Signature
from compiler.cache.store import CompileCache, cache_disabled, default_cache_dir
from compiler.cache.tree_index import TreeIndex, read_index, source_files, write_index
from compiler.compile_result import CompileOptions, CompileResult, TreeOverlay
from compiler.diagnostics import Diagnostic
from compiler.runtime.collector import collector_paused
from compiler.source.discovery import SourceFile
from compiler.source.safe_read import MAX_SOURCE_BYTES, UnsafeFile, read_regular_file_status
from compiler.source.tree_listing import list_tree

if TYPE_CHECKING:
    from compiler.cache.deferred_entries import DeferredEntries
    from compiler.source.documents import SourceDocument


def build(
    roots: Sequence[str], variable_files: Sequence[str] = (), options: CompileOptions | None = None,
    cwd: Path | None = None, *, cache_dir: Path | None = None, use_cache: bool = True,
    overlay: TreeOverlay | None = None, use_index: bool = True,
    deferred: DeferredEntries | None = None, kept: list[object] | None = None,
) -> CompileResult:
    """Compile every source under ``roots``; diagnostics cover loading and checking alike.

    Results are cached in ``cache_dir`` (default: ``$CAPC_CACHE_DIR``, else ``capc`` in
    the user cache directory, never the working tree) unless ``use_cache`` is false or
    ``CAPC_NO_CACHE=1``; entries are authenticated, so a planted one is a miss.
    ``overlay``: in-memory files and deletions the tree is compiled with (nothing written).
    ``use_index`` false (a second try): list and read the whole tree, whatever its stat
    index says, and hold the bytes read. ``deferred``: what the compile would store is held
    there (compiler/cache/deferred_entries.py). ``kept``: a one-shot process's list, given
    the documents and entries to hold to its exit (compiler.cli.exit_without_teardown).
    """
    started_ns = time.time_ns()
    options = options or CompileOptions()
    store = None
    if use_cache and not cache_disabled():
        store = CompileCache.for_tree(cache_dir or default_cache_dir(cwd), roots, options, cwd)
        if deferred is not None:
            store = deferred.cache_for(store)
    index = _usable_index(store, roots) if not overlay and use_index else None
    folders: list[str] = []
    signed: list[Signature] | None = None
    written: dict[str, Any] = {}
    if index is None:
        files, given, written = list_tree(roots, cwd, overlay, folders)
    variables, variable_problems = _variables(variable_files)
    tree = _TreeKeys(store, variables, variable_problems, options)
    indexed: _IndexedTree | None = None
    contents: Sequence[bytes | _Unread | None]
    if index is not None:
        # The no-change path: no listing, reading or hashing of unchanged files.
        signed = index.unchanged()
        cached, indexed = tree.indexed_result(index, signed, started_ns, roots)
        if cached is not None:
            return cached
        folders = [folder for folder, _ in index.folders]
    if indexed is not None:
        files, contents, file_keys = indexed
    else:
        if index is not None:  # a changed file could not be read: read them all
            files, given = source_files(index), {}
        contents, file_keys, signed = _read_tree(files, given, store,
                                                 not overlay and use_index)
    tree_key = tree.key_of(file_keys)
    remember = functools.partial(tree.remember, tree_key, started_ns, roots, folders, files,
                                 None if overlay else file_keys, signed)
    if indexed is None and store is not None and tree_key is not None:
        cached = store.load_result(tree_key)  # (the indexed path looked already)
        if cached is not None:
            remember(None)
            return cached
    memo = read_memo(store, files, file_keys) if store is not None else None
    fragments = read_fragments(store, files, file_keys) if store is not None else None
    try:
        with _collector_paused():
            documents, load_problems, packed = _load(files, contents, file_keys, variables,
                                                     store, written, late=not overlay and use_index)
            del contents, indexed  # the files' bytes: _load's ``late`` reads a file again
            result = _compile(documents, [*variable_problems, *load_problems], options, memo,
                              fragments if tree_key is not None else None)
    except _ChangedDuringCompile:  # a file read late was not as indexed: list and read all
        return build(roots, variable_files, options, cwd, cache_dir=cache_dir,
                     use_cache=use_cache, overlay=overlay, use_index=False,
                     deferred=deferred, kept=kept)
    tree_stored = store is not None and tree_key is not None and (
        deferred is None or not deferred.batched)  # (a batch's result is not the tree's)
    if store is not None:
        _store_file_entries(store, files, file_keys, packed, memo,
                            fragments if tree_key is not None else None, tree_stored)
    if tree_stored:
        result = result.with_file_bytes()
        remember(result, fragments.placements(files, file_keys) if fragments else None)
    if kept is not None:  # (freeing them one by one: ~10 ms of a 2,000-file compile)
        kept.append((documents, packed, memo, fragments, files, file_keys, signed, written))
    return result


def _read_tree(files: Sequence[SourceFile], given: Mapping[str, bytes],
               store: CompileCache | None, late: bool
               ) -> tuple[list[bytes | _Unread | None], list[str | None], list[Signature]]:
    """Each file's bytes (``given`` ones from memory), its key (None: cache off or
    unreadable) and its signature as it was opened, for the stat index (no second stat).

    ``late`` (see _load): once :data:`HELD_BYTES` are held, a file with a key is
    :data:`UNREAD` (read again if the compile needs it), each read and hashed in turn."""
    read: list[bytes | _Unread | None] = []
    file_keys: list[str | None] = []
    signed: list[Signature] = []
    budget = HELD_BYTES if late else -1
    for source in files:
        raw, status = (given[source.display_path], None) if source.display_path in given \
            else _read_file(source)
        # Each file's key once: the tree key and the per-file entries both need it.
        key = None if store is None or raw is None else store.file_key(source.display_path, raw)
        budget -= len(raw or b"")
        read.append(UNREAD if key is not None and late and budget < 0 else raw)
        file_keys.append(key)
        signed.append(status)
    return read, file_keys, signed


def _store_file_entries(store: CompileCache, files: Sequence[SourceFile],
                        file_keys: Sequence[str | None],
                        packed: tuple[list[PackPiece], dict[str, FileResult]] | None,
                        memo: CheckMemo | None, fragments: EntryFragments | None,
                        tree_stored: bool) -> None:
    """Store what the next compile of an edited tree reuses per file: the pack (after the
    compile: it keeps the positions asked, cache/position_answers.py), the check findings
    and the manifest entries' bytes (``tree_stored``: the tree entry keeps some of them)."""
    if packed is not None:
        store.store_files(*packed)
    if memo is not None:
        write_memo(store, memo, files, file_keys)
    if fragments is not None:
        write_fragments(store, fragments, files, file_keys, tree_stored=tree_stored)


def _variables(variable_files: Sequence[str]) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The template variables of ``variable_files`` and what loading them found."""
    if not variable_files:
        return {}, []
    from compiler.source.templates import load_template_variables

    return load_template_variables(list(variable_files))


def _usable_index(store: CompileCache | None, roots: Sequence[str]) -> TreeIndex | None:
    """The tree's stat index when discovery would list the same files now, else None."""
    if store is None:
        return None
    index = read_index(store)
    return index if index is not None and index.listing_holds(roots) else None


class _TreeKeys:
    """The tree key of a compile's file keys, and the entries stored under it (one per
    compile: it holds that compile's variables and options)."""

    __slots__ = ("_options", "_problems", "_store", "_variables")

    def __init__(self, store: CompileCache | None, variables: Mapping[str, Any],
                 variable_problems: Sequence[Diagnostic], options: CompileOptions) -> None:
        self._store = store
        self._variables = variables
        self._problems = variable_problems
        self._options = options

    def key_of(self, file_keys: Sequence[str | None]) -> str | None:
        """The tree key, or None when the cache is off or a file could not be read."""
        if self._store is None or any(key is None for key in file_keys):
            return None
        known = [key for key in file_keys if key is not None]
        return self._store.tree_key(known, self._variables, self._problems, self._options)

    def remember(self, tree_key: str | None, started_ns: int, roots: Sequence[str],
                 folders: Sequence[str], files: Sequence[SourceFile],
                 file_keys: Sequence[str | None] | None, signed: Sequence[Signature] | None,
                 result: CompileResult | None, placed: Any = None) -> None:
        """Store ``result`` (None: it is stored already; ``placed``: where its file bytes
        hold entries' bytes) and the tree's stat index (not for an overlay's tree,
        ``file_keys`` None: it is not what is on disk)."""
        if self._store is None or tree_key is None:
            return
        if result is not None:
            self._store.store_result(tree_key, result, placed)
        if file_keys is not None:
            write_index(self._store, started_ns, roots, folders, files,
                        [key for key in file_keys if key is not None], signed)

    def indexed_result(self, index: TreeIndex, signed: Sequence[Signature], started_ns: int,
                       roots: Sequence[str]) -> tuple[CompileResult | None, _IndexedTree | None]:
        """The stored result of the tree ``index`` lists, the files whose signature changed
        or is racy (None in ``signed``) read and hashed; on a miss, the tree's files, their
        bytes (:data:`UNREAD` for the files the index vouches for) and keys. (None, None)
        when a changed file cannot be read.

        The shortcut beside the general path (read and hash every file):
        tests/cache/test_tree_index.py proves both give the same result."""
        store = self._store
        if store is None:
            return None, None
        file_keys: list[str | None] = []
        contents: list[bytes | _Unread | None] = []
        files = source_files(index) if None in signed else []
        for position, (known, stored) in enumerate(zip(signed, index.files, strict=True)):
            if known is not None:
                file_keys.append(stored[4])
                contents.append(UNREAD)
                continue
            source = files[position]
            raw = _read_file(source)[0]
            if raw is None:
                return None, None
            file_keys.append(store.file_key(source.display_path, raw))
            contents.append(raw)
        tree_key = self.key_of(file_keys)
        cached = store.load_result(tree_key) if tree_key is not None else None
        if cached is None:
            return None, (files or source_files(index), contents, file_keys)
        if files:  # re-signed now: the next hit trusts them
            self.remember(tree_key, started_ns, roots, [f for f, _ in index.folders], files,
                          file_keys, signed, None)
        return cached, None


class _Unread:
    """The bytes of a file the stat index vouches for, read only if a compile needs them."""

    __slots__ = ()


UNREAD = _Unread()
HELD_BYTES = 32 * 1024 * 1024
"""The source bytes a compile holds at most (the rest are read again when wanted): held
all at once, a large tree's bytes stay resident after the compile frees them."""
_IndexedTree = tuple[list[SourceFile], list["bytes | _Unread | None"], list["str | None"]]


class _ChangedDuringCompile(Exception):
    """A file the stat index vouched for no longer has the bytes of its indexed key."""


def _collector_paused() -> AbstractContextManager[None]:
    """Run the block with the cyclic garbage collector off, then restore it.

    Loading and checking a tree allocates many objects that all live until the manifest
    is written, and almost no cycles: each collection the allocations trigger walks the
    whole growing heap and frees nothing (a tenth of a cold compile; the same memory)."""
    return collector_paused(before_resuming=_age_young_objects)


def _age_young_objects() -> None:
    """Move every object the paused block allocated into the oldest generation, unscanned.

    Left young, the hundreds of thousands of objects of a compile would all be walked by
    the first collection after ``gc.enable`` and then again by the full collection the
    survivors trigger (about 35 ms of a cold compile, for nothing). ``freeze`` then
    ``unfreeze`` moves them there by splicing the collector's lists (constant time); they
    stay collectable, so a cycle among them is freed by the next full collection, as in
    any long-lived process. A caller's own frozen objects are never thawed: with any
    frozen, this step is skipped.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _compile(documents: list[SourceDocument], found: list[Diagnostic],
             options: CompileOptions, memo: CheckMemo | None = None,
             fragments: EntryFragments | None = None) -> CompileResult:
    # Imported on a miss only: a cached compile needs none of the checks.
    from compiler.pipeline import compile_documents

    return compile_documents(documents, options, loading=found, memo=memo,
                             fragments=fragments)


def _read_file(source: SourceFile) -> tuple[bytes | None, Signature]:
    """The file's bytes (bounded, regular files only), or None: read_source reports why;
    and its signature as it was opened (compiler/cache/tree_index.py: a change after that
    shows in its times), None when it was not read.

    os.open/os.read (in read_regular_file_status): about half the cost of
    Path.read_bytes, and a cache hit reads every file of the tree.
    """
    try:
        raw, status = read_regular_file_status(source.disk_path, MAX_SOURCE_BYTES,
                                               inside=source.tree)
    except (OSError, UnsafeFile):
        return None, None
    return raw, (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
                 status.st_ctime_ns)


def _load(files: list[SourceFile], contents: Sequence[bytes | _Unread | None],
          file_keys: list[str | None], variables: Mapping[str, Any],
          store: CompileCache | None, written: Mapping[str, Any], late: bool = False
          ) -> tuple[list[SourceDocument], list[Diagnostic],
                     tuple[list[PackPiece], dict[str, FileResult]] | None]:
    """Every document in order, reusing the cached load result of each unchanged file, and
    the per-file pack to store after the compile (None when it is unchanged or uncached).
    ``written``: files capc rendered, by display path: their data (source/written_files.py).

    A file :data:`UNREAD` (vouched for by the stat index), and with ``late`` any stored one
    (no bytes held: 100s of MB in a large tree), is read only when its load result is not
    stored or a position no compile asked for is wanted. Proven equal by
    tests/cache/test_tree_index.py::test_each_edit_gives_what_an_uncached_compile_gives."""
    # Imported on a miss only: a cache hit needs no YAML loader.
    from compiler.source.documents import parse_source, read_source
    from compiler.source.written_files import loaded_as_written

    cached = store.load_files() if store is not None else {}
    # One compile's remembered plain-text tags, shared by its files' parsers (StrictParser).
    parse = functools.partial(parse_source, tags={})
    fresh: dict[str, FileResult] = {}
    documents: list[SourceDocument] = []
    diagnostics: list[Diagnostic] = []
    for source, raw, file_key in zip(files, contents, file_keys, strict=True):
        hit = cached.get(file_key) if file_key is not None and not source.is_template else None
        if isinstance(raw, _Unread):
            if hit is None:
                raw = _read_late(source, file_key, store)
            else:
                reread = functools.partial(_read_late, source, file_key, store)
                loaded, problems = hit.result(functools.partial(
                    _documents_of, source.display_path, reread, variables))
                fresh[file_key] = (loaded, problems)  # type: ignore[index]
                documents += loaded
                diagnostics += problems
                continue
        if raw is None:
            loaded, problems = read_source(source, variables)
        elif source.display_path in written and (known := loaded_as_written(
                source.display_path, raw, written[source.display_path], variables,
                RecordedPositions if store is not None else None)) is not None:
            loaded, problems = [known], []
            if store is not None and file_key is not None:
                fresh[file_key] = (loaded, problems)
        elif source.is_template:  # depends on the variables too: the tree key covers it
            loaded, problems = parse(source.display_path, raw, variables, template=True)
        elif store is None or file_key is None:
            loaded, problems = parse(source.display_path, raw, variables)
        else:
            if hit is not None:
                loaded, problems = hit.result(functools.partial(
                    _documents_of, source.display_path,
                    functools.partial(_read_late, source, file_key, store) if late
                    else functools.partial(bytes, raw), variables))
            else:
                # Positions that remember what the compile asks: the pack keeps those
                # answers instead of the tables (cache/position_answers.py).
                loaded, problems = parse(source.display_path, raw, variables,
                                                locator=RecordedPositions)
            fresh[file_key] = (loaded, problems)
        documents += loaded
        diagnostics += problems
    if store is None or fresh.keys() == cached.keys():
        return documents, diagnostics, None
    packed = store.pack_files(fresh)
    return documents, diagnostics, None if packed is None else (packed, fresh)


def _read_late(source: SourceFile, file_key: str | None, store: CompileCache | None) -> bytes:
    """The bytes of a file the stat index vouched for, read now; _ChangedDuringCompile
    when they are not those of its indexed key (it changed since the index was checked)."""
    raw = _read_file(source)[0]
    if raw is None or store is None or store.file_key(source.display_path, raw) != file_key:
        raise _ChangedDuringCompile(source.display_path)
    return raw


def _documents_of(display_path: str, read: Callable[[], bytes], variables: Mapping[str, Any]
                  ) -> list[SourceDocument]:
    """The documents of a plain YAML file parsed from its bytes, as when it was cached."""
    from compiler.source.documents import parse_source

    return parse_source(display_path, read(), variables)[0]
