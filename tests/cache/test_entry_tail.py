"""An entry read in place (compiler/cache/entry_tail.py) is the entry ``read_entry`` reads,
and a manifest put together from stored entries' bytes is written from pieces read from
their files one by one, never joined, as the bytes of a full dump."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench.corpus import write_corpus
from compiler import build as build_module
from compiler.build import build
from compiler.cache import entry_tail
from compiler.cache import store as store_module
from compiler.cache.entry_tail import ResolvedPieces, Span, read_entry_in_place
from compiler.cache.store import CompileCache
from compiler.manifest import write_atomically
from tests.cache.test_entry_fragments import _edit, _reference, _seen

_PIECES = [[], [b""], [b"abc"], [b"a", memoryview(b"bc"), b"", b"d" * 70_000]]


@pytest.mark.parametrize("pieces", _PIECES)
@pytest.mark.parametrize("selector", [bytes(32), b"s" * 32])
def test_an_entry_read_in_place_is_the_entry_read_whole(
        tmp_path: Path, pieces: list[bytes | memoryview], selector: bytes) -> None:
    store = CompileCache(tmp_path, "tree", b"k" * 32)
    store.write_entry("entries", {"rows": [1, 2]}, iter(pieces), selector)
    whole = store.read_entry("entries", selector)
    in_place = read_entry_in_place(store, "entries", selector)
    assert whole is not None and in_place is not None
    payload, tail = in_place
    assert payload == whole[0] == {"rows": [1, 2]}
    assert len(tail) == len(whole[1])
    assert bytes(tail[0:len(tail)]) == whole[1] == b"".join(pieces)
    for start, stop in [(0, 0), (0, 1), (1, 3), (2, 70_003), (5, 2)]:
        span = tail[start:stop]
        assert isinstance(span, Span)
        assert bytes(span) == whole[1][start:stop] and len(span) == len(whole[1][start:stop])
    assert read_entry_in_place(store, "entries", None) is not None  # whichever selector


@pytest.mark.parametrize("selector", [bytes(32), b"s" * 32, None])
def test_without_positioned_reads_the_entry_is_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, selector: bytes | None) -> None:
    store = CompileCache(tmp_path, "tree", b"k" * 32)
    store.write_entry("entries", {"rows": [3]}, [b"abc", b"d" * 5000], b"s" * 32)
    monkeypatch.delattr(os, "pread")
    found = read_entry_in_place(store, "entries", selector)
    if selector == bytes(32):
        assert found is None
        return
    assert found is not None and found[0] == {"rows": [3]}
    assert len(found[1]) == 5003 and bytes(found[1][2:4]) == b"cd"


def test_an_entry_read_in_place_is_a_miss_where_read_entry_misses(tmp_path: Path) -> None:
    store = CompileCache(tmp_path, "tree", b"k" * 32)
    store.write_entry("entries", 1, [b"x" * 100, b"y"])
    assert read_entry_in_place(store, "entries", bytes(32)) is not None
    assert read_entry_in_place(store, "entries", b"s" * 32) is None  # another selector
    other_key = CompileCache(tmp_path, "tree", b"j" * 32)
    assert read_entry_in_place(other_key, "entries", bytes(32)) is None
    path = tmp_path / "tree.entries"
    sealed = bytearray(path.read_bytes())
    sealed[-1] ^= 1  # a byte of the tail: the HMAC no longer holds
    path.write_bytes(bytes(sealed))
    assert store.read_entry("entries") is None
    assert read_entry_in_place(store, "entries", bytes(32)) is None
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    assert read_entry_in_place(store, "entries", bytes(32)) is None


def test_an_entry_past_the_bound_of_whole_reads_is_read_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tail is never held, so only its marshal part has the bound of a whole read (an
    import of Microsoft Graph stores 700 MB of entries' bytes); past the in-place bound, a
    miss."""
    store = CompileCache(tmp_path, "tree", b"k" * 32)
    store.write_entry("entries", {"rows": [1]}, [b"x" * 5000])
    monkeypatch.setattr(store_module, "MAX_ENTRY_BYTES", 1000)
    assert store.read_entry("entries") is None
    found = read_entry_in_place(store, "entries", bytes(32))
    assert found is not None and found[0] == {"rows": [1]} and len(found[1]) == 5000
    monkeypatch.setattr(store_module, "MAX_ENTRY_BYTES", 4)  # the marshal part is larger
    assert read_entry_in_place(store, "entries", bytes(32)) is None
    monkeypatch.setattr(store_module, "MAX_ENTRY_BYTES", 1000)
    monkeypatch.setattr(entry_tail, "MAX_IN_PLACE_BYTES", 4000)
    assert read_entry_in_place(store, "entries", bytes(32)) is None


def test_a_manifest_of_stored_entries_is_written_in_pieces_as_a_full_dump(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming path (pieces read from the cache's files as they are written) writes
    the general path's bytes (a whole manifest dumped at once), and no piece is the whole."""
    write_corpus(tmp_path / "src", 60, seed=23)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    build(["src"], cache_dir=cache)
    _edit(sorted((tmp_path / "src").rglob("*-api.yaml"))[0], "description: ",
          "description: Edited. ")
    result = build(["src"], cache_dir=cache)  # the unchanged entries' bytes are stored
    pieces = result.file_pieces()
    assert isinstance(pieces, ResolvedPieces)
    reference = _reference()[0]
    assert reference is not None
    written = tmp_path / "out" / "manifest.json"
    write_atomically(written, pieces)
    assert written.read_bytes() == reference == result.file_bytes()
    assert len(pieces) > len(json.loads(reference)["capabilities"])
    assert max(len(piece) for piece in pieces) < len(reference) // 10
    assert [d.as_dict() for d in result.diagnostics] == _reference()[1]


@pytest.mark.parametrize("held", [0, 3000])
def test_a_tree_past_the_held_bytes_compiles_as_one_held_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int) -> None:
    """Past ``HELD_BYTES``, a file's bytes are read again when the compile needs them (a
    file it loads, a position no compile asked for): the results are an uncached compile's,
    cold and after an edit; a file changed after it was hashed is compiled as it was then
    (its bytes held) or as it is now (read again: not the bytes hashed, the tree is
    compiled again), never half of each."""
    monkeypatch.setattr(build_module, "HELD_BYTES", held)
    write_corpus(tmp_path / "src", 30, seed=29)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    edited = sorted((tmp_path / "src").rglob("*-api.yaml"))[0]
    _edit(edited, "description: ", "description: Edited. ")
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    _edit(edited, "Edited. ", "Edited twice. ")  # a file the stored pack does not hold
    hashed = _reference()
    real_read = build_module._read_tree

    def edited_after_reading(*arguments: Any) -> Any:
        read = real_read(*arguments)
        if edited.read_text(encoding="utf-8").count("Edited twice. "):
            _edit(edited, "Edited twice. ", "Edited late. ")
        return read

    monkeypatch.setattr(build_module, "_read_tree", edited_after_reading)
    late = _seen(build(["src"], cache_dir=cache))
    monkeypatch.setattr(build_module, "_read_tree", real_read)
    now = _reference()
    assert late == now if held == 0 else late in (hashed, now)


@pytest.mark.parametrize("spooled", [True, False])
def test_the_entries_a_compile_makes_are_spooled_until_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spooled: bool) -> None:
    """A cold compile's new entries' bytes past what it holds are spans of a temporary
    file (not held), or held as they are when that file cannot be made: the manifest is a
    full dump's either way, and so is the next compile's from the stored bytes."""
    if not spooled:
        def refused(folder: Path) -> Any:
            raise OSError("no temporary file")

        monkeypatch.setattr(entry_tail, "_unnamed_file", refused)
    monkeypatch.setattr(entry_tail, "SPOOL_FROM", 0)  # every piece past what is held
    spool = entry_tail.Spool(tmp_path / "spool", held=3)
    kept = [spool.keep(b"abc"), spool.keep(memoryview(b"xdefx")[1:4]), spool.keep(b"gh"),
            spool.keep(b"")]
    assert [bytes(piece) for piece in kept] == [b"abc", b"def", b"gh", b""]
    assert [isinstance(piece, Span) for piece in kept] == [False, spooled, spooled, False]
    write_corpus(tmp_path / "src", 30, seed=37)
    monkeypatch.chdir(tmp_path)
    result = build(["src"], cache_dir=tmp_path / "cache")
    assert _seen(result) == _reference()
    pieces = list(result.file_pieces()._pieces)  # type: ignore[attr-defined]
    assert any(isinstance(piece, Span) for piece in pieces) == spooled
    assert not list((tmp_path / "cache").glob(".spool.*"))  # its name removed at once
    _edit(sorted((tmp_path / "src").rglob("*-api.yaml"))[0], "description: ",
          "description: Edited. ")
    assert _seen(build(["src"], cache_dir=tmp_path / "cache")) == _reference()


def test_a_small_tree_holds_the_entries_it_makes(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Under SPOOL_FROM nothing is spooled: no file, no system call per entry."""
    write_corpus(tmp_path / "src", 30, seed=37)
    monkeypatch.chdir(tmp_path)

    def unexpected(folder: Path) -> Any:
        raise AssertionError("a small tree's entries were spooled")

    monkeypatch.setattr(entry_tail, "_unnamed_file", unexpected)
    result = build(["src"], cache_dir=tmp_path / "cache")
    assert _seen(result) == _reference()
    pieces = list(result.file_pieces()._pieces)  # type: ignore[attr-defined]
    assert not any(isinstance(piece, Span) for piece in pieces)
