"""The per-file pack's contents: each plain YAML file's load result in storable form.

A file's entry is its documents (display path, index, data, first line) and its loading
diagnostics. Its position tables are not stored: compiler/cache/position_answers.py keeps the
answers compiles asked of them instead.

The documents are written as JSON by orjson where that reads back as exactly the same
values, and with ``marshal`` where it might not. marshal pays for its reference table
with a hash lookup per shared object, and a freshly loaded document shares every key
string with its position table: about 20 ms for the 2,000-file bench corpus, against
about 2 ms for orjson. Exactly the same values, because what is stored is what
compiler/source/yaml_loader.py makes (dicts with str keys, lists, str, int, float, bool
and None; paths, indexes, lines and diagnostics are str and int), and:

1. orjson refuses integers past 64 bits, unpaired surrogates (a file name read with
   ``surrogateescape``) and nesting past 255 levels: such a file goes to marshal;
2. orjson writes NaN and the infinities as ``null``, as it writes None: a file whose
   JSON holds the bytes ``null`` anywhere (a None, a NaN, or merely a string containing
   them) goes to marshal, so every value JSON carries is a str, int, float, bool, list
   or dict;
3. orjson writes the shortest digits that read back as the same float, and reads them
   back correctly rounded (-0.0 included), and JSON keeps true and false apart from 1 and 0;
4. the only tuples are the pack's own rows (documents, diagnostics), which come back as
   lists and are only ever unpacked; the documents' data holds lists only.

tests/cache/test_cache_files.py compares the round trip with the values over
generated YAML-like data, including every case above.
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from compiler.cache.position_answers import FileReparse, RecordedPositions
from compiler.diagnostics import Diagnostic, Severity
from compiler.runtime.records import record

if TYPE_CHECKING:
    from compiler.source.documents import SourceDocument

FileResult: TypeAlias = "tuple[list[SourceDocument], list[Diagnostic]]"
PlainFile: TypeAlias = "tuple[list[Any], list[Any]]"


def diagnostic_to_plain(d: Diagnostic) -> tuple[str, int, int, str, str, str]:
    """A diagnostic as plain values (read back by :func:`diagnostic_from_plain`)."""
    return (d.path, d.line, d.col, d.severity.value, d.code, d.message)


def diagnostic_from_plain(item: Any) -> Diagnostic:
    """The diagnostic :func:`diagnostic_to_plain` made ``item`` of."""
    path, line, col, severity, code, message = item
    return Diagnostic(path, line, col, Severity(severity), code, message)


def file_to_plain(documents: list[SourceDocument], diagnostics: list[Diagnostic]) -> PlainFile:
    """One file's load result without its position tables."""
    return ([(d.path, d.index, d.data, d.line) for d in documents],
            [diagnostic_to_plain(d) for d in diagnostics])


PackPiece: TypeAlias = "tuple[str, bytes | memoryview]"
"""One piece of a pack: ``("json", orjson bytes)`` or ``("marshal", marshal bytes)``, each
a mapping of file key -> plain file; a pack is a list of them (several when the packs of
batches are put together: compiler/cache/deferred_entries.py)."""


def pack(files: Mapping[str, PlainFile]) -> list[PackPiece]:
    """The stored pieces of every file: JSON where provably exact (module docstring), the
    rest marshal. ValueError when marshal cannot hold one of the rest."""
    whole = _exact_json(files)
    if whole is not None:
        return [("json", whole)]
    # Some file needs marshal: sort them out one by one (a rarer, slower path).
    # Each file is judged with its key: a key holding "null" takes its file to marshal too.
    as_json = {key: plain for key, plain in files.items()
               if _exact_json({key: plain}) is not None}
    others = {key: plain for key, plain in files.items() if key not in as_json}
    written = _exact_json(as_json)
    if written is None:  # each entry passed whole, so this should not happen: lose nothing
        return [("marshal", marshal.dumps(dict(files)))]
    return [("json", written), ("marshal", marshal.dumps(others))]


def unpack(pieces: Sequence[PackPiece]) -> dict[str, Any]:
    """File key -> plain file, as :func:`pack` stored them (authenticated bytes only)."""
    import orjson  # here, not at the top: a tree hit reads no per-file entry

    files: dict[str, Any] = {}
    for kind, piece in pieces:
        if kind == "json":
            files.update(orjson.loads(piece))
        elif kind == "marshal":
            files.update(marshal.loads(piece))
        else:
            raise ValueError(f"unknown pack piece {kind!r}")
    return files


def _exact_json(value: Any) -> bytes | None:
    import orjson

    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None
    return None if b"null" in written else written


@record(frozen=True, slots=True)
class StoredFile:
    """One file's stored load result: its documents without position tables (each with
    the answers earlier compiles got from it) and its loading diagnostics."""

    documents: list[Any]  # (path, index, data, first line) per document
    answers: list[Any]  # one mapping per document: see compiler/cache/position_answers.py
    diagnostics: list[Diagnostic]

    def result(self, parse: Callable[[], Sequence[SourceDocument]]) -> FileResult:
        """The documents and diagnostics; ``parse`` loads the file again, from the same
        bytes, should a compile ask for a position no earlier compile asked for."""
        # Imported when per-file entries are read (a miss): a tree hit needs no YAML loader.
        from compiler.source.documents import SourceDocument

        reparse = FileReparse(parse)
        documents = [
            SourceDocument(path, index, data, RecordedPositions(
                None, answers, functools.partial(reparse.table, position)), line)
            for position, ((path, index, data, line), answers)
            in enumerate(zip(self.documents, self.answers, strict=True))]
        return documents, self.diagnostics
