"""The manifest's bytes after an edit, from the stored bytes of every unchanged entry.

A capability's manifest entry, as normalisation builds it (``normalize.capability_entry``),
reads its document alone: its data, its display path and the positions of its nodes. So
the entry's JSON bytes are a function of the file's key (display path and SHA-256 of its
bytes: compiler/cache/store.py), like the check findings of compiler/cache/check_memo.py.
This entry keeps, per file key, the compact and the indented bytes of each entry built
straight from one of the file's documents; the next compile of the tree writes the
manifest from those bytes for every entry that is still the very object normalisation
built from an unchanged file, and dumps only the others (an edited or new file's, and
any entry a pin, a pin override or a ToolOverride replaced).

The file is put together as :func:`compiler.runtime.manifest.format.dump_manifest` writes
it: the sections other than ``capabilities`` dumped as a document whose capabilities are
empty, then the entries' bytes spliced into that list (``capabilities`` is the first key
in sorted order; a JSON string never holds a raw newline, so an entry's indented bytes
are re-indented by replacing each newline). The digest is the SHA-256 of the compact form
put together the same way. Any value the json module refuses takes the general path.
Templates are never kept (their documents depend on the variables).

An entry's indented bytes are kept once: where the manifest file's bytes put them, in the
tree entry (store.py's ``store_result``), whose payload says where each file key's are;
the entries' tail keeps only the compact bytes of those (a row whose end is its compact
bytes' end). A compile whose tree is not stored (a batch of an import) keeps both in the
tail. The tree entry read is whichever is stored (an edit replaces it, its payload with
it): what it places for a file key is that key's bytes, like the tail's.
Proven equal by tests/cache/test_entry_fragments.py::test_edits_write_the_bytes_of_a_full_dump.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.cache.entry_tail import (
    ResolvedPieces,
    Span,
    Spool,
    TailFile,
    read_entry_in_place,
    resolved,
)
from compiler.compile_result import CompileResult
from compiler.diagnostics import Diagnostic

if TYPE_CHECKING:
    from compiler.cache.store import CompileCache
    from compiler.runtime.manifest.model import CapabilityEntry, ManifestModel
    from compiler.source.discovery import SourceFile
    from compiler.source.documents import SourceDocument

ENTRY_KIND = "entries"
_TREE_KIND = "tree"
Fragment = tuple["bytes | memoryview | Span", "bytes | memoryview | Span"]
"""An entry's compact bytes (for the digest) and its indented bytes (for the file); stored
ones are spans of the entry's tail, where they are kept one after the other (marshal then
holds only their offsets: it is slow with thousands of byte strings), read from its file
when hashed or written (compiler/cache/entry_tail.py: a large tree's are hundreds of
megabytes, never all held)."""
_COMPACT_HEAD = b'{"capabilities":['
_INDENTED_HEAD = b'{\n  "capabilities": ['
_EMPTY = b"]"
_FIRST, _NEXT = b"\n    ", b",\n    "  # before the first entry's indented bytes, the others'
_LIST = "capabilities"
_ITEM_HEAD, _ITEM_END, _COMPACT_END = _INDENTED_HEAD + _FIRST, b"\n  ]\n}", b"]}"
_REWRITE_SHARE = 8  # rewrite the entry when over 1 in 8 of the stored entries is new


class EntryFragments:
    """One compile's entry bytes: those stored for unchanged files, by display path and
    document index, and those it made (see the module).

    Not frozen: the compile notes which entry came from which document (one object per
    compile, never shared between compiles).
    """

    __slots__ = ("_origins", "_spool", "fresh", "known", "placed", "storable")

    def __init__(self, known: dict[str, dict[int, Fragment]], storable: frozenset[str],
                 spool: Path | None = None) -> None:
        self.known = known
        self.storable = storable  # plain YAML files whose key is known
        self.fresh: dict[str, dict[int, Fragment]] = {}
        self._origins: dict[int, tuple[CapabilityEntry, str, int]] = {}
        # Where the manifest file's bytes hold each storable entry's indented bytes.
        self.placed: dict[str, dict[int, tuple[int, int]]] = {}
        self._spool = Spool(spool)  # the made bytes, until written (None: held)

    def note_built(self, documents: Sequence[SourceDocument],
                   entries: Sequence[CapabilityEntry]) -> None:
        """Note that each of ``entries`` was built from the document beside it."""
        for document, entry in zip(documents, entries, strict=True):
            # By identity (the entry is kept here, so its id is not reused meanwhile).
            self._origins[id(entry)] = (entry, document.path, document.index)

    def stored(self, document: SourceDocument) -> bool:
        """Whether the bytes of the entry built from ``document`` are stored."""
        return document.index in self.known.get(document.path, ())

    def manifest_result(self, model: ManifestModel, diagnostics: tuple[Diagnostic, ...]
                        ) -> CompileResult | None:
        """The result whose file bytes are the model's manifest, or None: the general path
        decides (a value the json module refuses, no capability at all)."""
        from compiler.runtime.manifest.format import value_bytes
        from compiler.runtime.manifest.model import manifest_json

        entries = sorted(model.capabilities, key=lambda entry: entry.code)
        if not entries:
            return None
        compact: list[bytes | memoryview | Span] = []
        indented: list[bytes | memoryview | Span] = []
        try:
            for entry in entries:
                made = self._fragment(entry)
                if made is None and entry.type == "api" and entry.api is None:
                    return None  # a stand-in without its stored bytes: built whole instead
                if made is None:
                    # Dumped as the one entry of a manifest: orjson lays its bytes out
                    # as a list item of the file (see _made), no re-indenting pass.
                    made = self._made(entry, value_bytes({_LIST: [entry.to_json()]}))
                compact.append(made[0])
                indented.append(made[1])
            rest = manifest_json(replace(model, capabilities=()))
            content = _file_pieces(rest, compact, indented)
        except (ValueError, TypeError, RecursionError):
            return None
        if content is None:
            return None
        self._place(entries, indented)
        return CompileResult.from_file_pieces(ResolvedPieces(content), diagnostics)

    def _place(self, entries: Sequence[CapabilityEntry],
               indented: Sequence[bytes | memoryview | Span]) -> None:
        """Note where ``_file_pieces`` put each storable entry's indented bytes."""
        offset = len(_INDENTED_HEAD)
        for position, (entry, piece) in enumerate(zip(entries, indented, strict=True)):
            offset += len(_FIRST if position == 0 else _NEXT)
            origin = self._origins.get(id(entry))
            if origin is not None and origin[0] is entry and origin[1] in self.storable:
                self.placed.setdefault(origin[1], {})[origin[2]] = (offset, offset + len(piece))
            offset += len(piece)

    def placements(self, files: Sequence[SourceFile], file_keys: Sequence[str | None]
                   ) -> tuple[dict[str, tuple[int, ...]], dict[str, dict[int, bytes]]]:
        """What the tree entry keeps: :attr:`placed` by file key, (document index, start,
        end) after one another (marshal is fast with few, flat objects), and the indented
        bytes of the stored entries this manifest does not hold (an override replaced
        them): the next compile may want them again."""
        placed: dict[str, tuple[int, ...]] = {}
        apart: dict[str, dict[int, bytes]] = {}
        for source, key in zip(files, file_keys, strict=True):
            spots = self.placed.get(source.display_path, {})
            if key is None:
                continue
            if spots:
                placed[key] = tuple(number for index, spot in sorted(spots.items())
                                    for number in (index, *spot))
            known = self.known.get(source.display_path, {})
            if len(spots) < len(known):
                apart[key] = {index: bytes(fragment[1]) for index, fragment in known.items()
                              if index not in spots}
        return placed, apart

    def _fragment(self, entry: CapabilityEntry) -> Fragment | None:
        origin = self._origins.get(id(entry))
        if origin is None or origin[0] is not entry:
            return None
        return self.known.get(origin[1], {}).get(origin[2])

    def _made(self, entry: CapabilityEntry, made: tuple[bytes, bytes]) -> Fragment:
        """The entry's bytes in ``made``, the bytes of a manifest holding only ``entry``
        (its indented bytes are those of a list item of the manifest), kept for the next
        compile when ``entry`` is one built straight from a document of a plain file."""
        compact, indented = made
        if not (compact.startswith(_COMPACT_HEAD) and compact.endswith(_COMPACT_END)
                and indented.startswith(_ITEM_HEAD) and indented.endswith(_ITEM_END)):
            raise ValueError("not the bytes of a one-entry manifest")  # the general path
        # Held apart until written (a large tree's are hundreds of megabytes).
        kept = (self._spool.keep(memoryview(compact)[len(_COMPACT_HEAD):-len(_COMPACT_END)]),
                self._spool.keep(memoryview(indented)[len(_ITEM_HEAD):-len(_ITEM_END)]))
        origin = self._origins.get(id(entry))
        if origin is not None and origin[0] is entry and origin[1] in self.storable:
            self.fresh.setdefault(origin[1], {})[origin[2]] = kept
        return kept


def _file_pieces(rest: dict[str, Any], compact: list[bytes | memoryview | Span],
                indented: list[bytes | memoryview | Span]
                ) -> list[bytes | memoryview | Span] | None:
    """The file bytes of the manifest ``rest`` with ``capabilities`` of the given bytes,
    as pieces in order."""
    from compiler.runtime.manifest.format import DIGEST_PREFIX, value_bytes

    rest_compact = value_bytes({**rest, "capabilities": []})[0]
    if not rest_compact.startswith(_COMPACT_HEAD + _EMPTY):
        return None
    # The compact form is only hashed, piece by piece (never joined: it is megabytes).
    whole = hashlib.sha256(_COMPACT_HEAD)
    separator = b""
    for piece in compact:
        whole.update(separator)
        whole.update(resolved(piece))
        separator = b","
    whole.update(rest_compact[len(_COMPACT_HEAD):])
    digest = DIGEST_PREFIX + whole.hexdigest()
    rest_indented = value_bytes({**rest, "capabilities": [], "digest": digest})[1]
    if not rest_indented.startswith(_INDENTED_HEAD + _EMPTY):
        return None
    # Nor is the file's form joined: its pieces are written one after the other.
    pieces: list[bytes | memoryview | Span] = [_INDENTED_HEAD]
    for piece in indented:
        pieces += (_NEXT if len(pieces) > 1 else _FIRST, piece)
    pieces += (b"\n  ", rest_indented[len(_INDENTED_HEAD):], b"\n")
    return pieces


def read_fragments(store: CompileCache, files: Sequence[SourceFile],
                   file_keys: Sequence[str | None]) -> EntryFragments:
    """The stored entry bytes of the tree's unchanged plain files."""
    stored = read_entry_in_place(store, ENTRY_KIND, bytes(32))
    known: dict[str, dict[int, Fragment]] = {}
    storable = {source.display_path for source, key in zip(files, file_keys, strict=True)
                if key is not None and not source.is_template}
    if stored is not None:
        try:
            by_key: dict[str, Any] = stored[0]
            tail = stored[1]
            placed, apart, manifest = _stored_placements(store) if by_key else ({}, {}, None)
            for source, key in zip(files, file_keys, strict=True):
                if key is not None and source.display_path in storable \
                        and (kept := by_key.get(key)) is not None:
                    known[source.display_path] = _kept_fragments(
                        kept, tail, placed.get(key), apart.get(key) or {}, manifest)
        except (TypeError, ValueError, AttributeError):
            known = {}
    return EntryFragments(known, frozenset(storable), store.directory)


def _kept_fragments(rows: Any, tail: TailFile, placed: Any, apart: dict[int, bytes],
                    manifest: TailFile | None) -> dict[int, Fragment]:
    """A file's fragments from its rows: indented bytes from the tail, or from the tree
    entry, in its manifest where it places them or apart (a row whose indented bytes are
    in none of them is left out: that entry is dumped again)."""
    kept: dict[int, Fragment] = {}
    for index, start, compact, end in rows:
        if not 0 <= start <= start + compact <= end <= len(tail):
            continue
        if end > start + compact:
            kept[index] = (tail[start:start + compact], tail[start + compact:end])
            continue
        # (index, start, end) after one another; most files hold one document.
        for at in range(0, len(placed or ()) - 2, 3):
            if placed[at] == index and manifest is not None:
                if 0 <= placed[at + 1] < placed[at + 2] <= len(manifest):
                    kept[index] = (tail[start:end], manifest[placed[at + 1]:placed[at + 2]])
                break
        if index not in kept and isinstance(indented := apart.get(index), bytes):
            kept[index] = (tail[start:end], indented)
    return kept


def _stored_placements(store: CompileCache
                       ) -> tuple[dict[str, Any], dict[str, Any], TailFile | None]:
    """The stored tree entry's placements, the indented bytes it keeps apart and its
    manifest file's bytes (none: all empty)."""
    stored = read_entry_in_place(store, _TREE_KIND, None)  # whichever tree (see the module)
    kept = stored[0][3] if stored is not None and isinstance(stored[0], tuple) \
        and len(stored[0]) == 4 else None
    if stored is None or not isinstance(kept, tuple) or len(kept) != 2 \
            or not all(isinstance(part, dict) for part in kept):
        return {}, {}, None
    return kept[0], kept[1], stored[1]


def write_fragments(store: CompileCache, fragments: EntryFragments,
                    files: Sequence[SourceFile], file_keys: Sequence[str | None],
                    *, tree_stored: bool = True) -> None:
    """Store the entry bytes of every plain file of the tree when many were made (a cold
    compile, a checkout of another branch): after an edit of a few files, rewriting
    megabytes would cost more than dumping those files' entries again next time.
    ``tree_stored``: the compile's tree entry is stored with its placements (only the
    compact bytes of the entries it places are kept here)."""
    made = sum(map(len, fragments.fresh.values()))
    if made == 0 or made * _REWRITE_SHARE < sum(map(len, fragments.known.values())):
        return
    by_key: dict[str, list[tuple[int, int, int, int]]] = {}
    pieces: list[bytes | memoryview | Span] = []
    offset = 0
    for source, key in zip(files, file_keys, strict=True):
        path = source.display_path
        if key is None or path not in fragments.storable:
            continue
        kept = {**fragments.known.get(path, {}), **fragments.fresh.get(path, {})}
        placed = fragments.placed.get(path, {}) if tree_stored else {}
        rows = by_key[key] = []
        for index, (compact, indented) in sorted(kept.items()):
            if index in placed:  # the tree entry keeps its indented bytes
                end = offset + len(compact)
                pieces.append(compact)
            else:
                end = offset + len(compact) + len(indented)
                pieces += (compact, indented)
            rows.append((index, offset, len(compact), end))
            offset = end
    store.write_entry(ENTRY_KIND, by_key, ResolvedPieces(pieces))  # each read in turn
