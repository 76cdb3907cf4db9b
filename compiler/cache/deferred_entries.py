"""What an import's check compiles would store, held until the import knows it writes.

``capc import openapi`` compiles the tree as it would be after writing (the generated
files in memory: compiler/authoring/openapi/generated_tree.py), then writes exactly those
bytes; the user's ``capc compile`` reads the same files next. Entries are keyed by what
the bytes are (display path and SHA-256: compiler/cache/store.py), so what the check's
compile would store is what that compile can reuse. It is stored only when the check
finds no error (the files are written) and the import is not a ``--check``; nothing is
held when the cache is off (the compile then has no store at all).

- One compile of the whole tree: its entries as that compile would write them, the whole
  tree's result included, which the next compile of the written tree finds by its key.
- A tree compiled in batches (a large document: each batch is a part of the tree):
  no batch's result is kept (it is not the tree's), and no batch reads the cache (a
  whole tree's pack would cost the memory the batches save). The per-file entries of
  every batch (the file pack: :meth:`CompileCache.store_files`, the check findings:
  compiler/cache/check_memo.py, the manifest entries' bytes:
  compiler/cache/entry_fragments.py) are put together into one entry of each kind, as
  if one compile had made them; each batch's bytes held zlib-compressed meanwhile. A kind
  one batch did not give is not stored at all.

tests/authoring/openapi/test_import_cache.py proves the next compile's manifest and
diagnostics the bytes of an uncached compile's, and that it reuses what is held here.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compiler.cache.store import CompileCache

_FILES, _CHECKS, _ENTRIES, _TREE = "files", "checks", "entries", "tree"
_MERGED = (_FILES, _CHECKS, _ENTRIES)


@dataclasses.dataclass(frozen=True, slots=True)
class _Held:
    """One entry a compile would have written: its payload, selector and tail (plain or
    compressed pieces) with the tail's size."""

    payload: Any
    selector: bytes
    pieces: tuple[bytes | memoryview, ...]
    compressed: bool
    size: int

    def tail(self) -> Iterator[bytes | memoryview]:
        """The tail's pieces as they were given (decompressed one by one)."""
        if not self.compressed:
            yield from self.pieces
            return
        for piece in self.pieces:
            yield zlib.decompress(piece)


class DeferredEntries:
    """The entries of the compiles of one check, stored by :meth:`store` (see the module).

    Not frozen: each compile of the check adds its entries (one object per check, never
    shared between checks).
    """

    __slots__ = ("_compiles", "_store", "batched")

    def __init__(self, batched: bool) -> None:
        self.batched = batched
        self._compiles: list[dict[str, _Held]] = []
        self._store: CompileCache | None = None

    def cache_for(self, store: CompileCache) -> CompileCache:
        """The cache one compile of the check uses: its writes held here; in batches, no
        reads."""
        self._store = store
        self._compiles.append({})
        return dataclasses.replace(store, held=self, reads=not self.batched)

    def hold(self, store: CompileCache, kind: str, payload: Any,
             tail: Iterable[bytes | memoryview], selector: bytes) -> None:
        """Keep what ``store`` would write as the entry ``kind`` (a batch's result, and any
        kind not put together here, is dropped: the cache is best effort)."""
        if not self._compiles or (kind == _TREE and self.batched) or (
                kind not in _MERGED and kind != _TREE):
            return
        pieces = tuple(tail)
        size = sum(len(piece) for piece in pieces)
        if self.batched and size:
            packer = zlib.compressobj(1)
            pieces = (b"".join([*(packer.compress(piece) for piece in pieces),
                                packer.flush()]),)
        self._compiles[-1][kind] = _Held(payload, selector, pieces, self.batched and bool(size),
                                         size)

    def store(self) -> None:
        """Write the held entries into the cache (once the tree is known to be written)."""
        if self._store is None or not self._compiles:
            return
        store = self._store
        for kind in _MERGED:
            held = [compile_entries.get(kind) for compile_entries in self._compiles]
            if None in held:
                continue
            merged = _MERGES[kind]([item for item in held if item is not None])
            if merged is not None:
                store.write_entry(kind, merged[0], merged[1])
        if not self.batched and (tree := self._compiles[-1].get(_TREE)) is not None:
            store.write_entry(_TREE, tree.payload, tree.tail(), tree.selector)
        self._compiles.clear()


def _merged_files(held: Sequence[_Held]) -> tuple[Any, Iterator[bytes | memoryview]] | None:
    """One pack of every compile's (:meth:`CompileCache.store_files`' layout: answers by
    file key and each piece's kind and size, then the pieces)."""
    answers: dict[str, Any] = {}
    layout: list[Any] = []
    for item in held:
        part_answers, part_layout = item.payload
        answers.update(part_answers)
        layout += part_layout
    return (answers, layout), _chained(held)


def _merged_checks(held: Sequence[_Held]) -> tuple[Any, Iterator[bytes | memoryview]] | None:
    """Every compile's findings by file key (check_memo.write_memo's layout)."""
    by_key: dict[str, Any] = {}
    for item in held:
        by_key.update(item.payload)
    return by_key, iter(())


def _merged_entries(held: Sequence[_Held]) -> tuple[Any, Iterator[bytes | memoryview]] | None:
    """Every compile's entry bytes (entry_fragments.write_fragments' layout: per file key,
    (index, start, compact size, end) rows into the tail), each compile's rows moved past
    the tails before its own."""
    by_key: dict[str, Any] = {}
    offset = 0
    for item in held:
        for key, rows in item.payload.items():
            by_key[key] = [(index, start + offset, compact, end + offset)
                           for index, start, compact, end in rows]
        offset += item.size
    return by_key, _chained(held)


def _chained(held: Sequence[_Held]) -> Iterator[bytes | memoryview]:
    for item in held:
        yield from item.tail()


_MERGES = {_FILES: _merged_files, _CHECKS: _merged_checks, _ENTRIES: _merged_entries}
