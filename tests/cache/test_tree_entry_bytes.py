"""The tree entry keeps the manifest file's bytes: a caching compile dumps the manifest once
(for the entry and for the writer), a hit gives the same bytes and the same manifest back
without dumping it again, and a manifest the writer refuses is stored as before."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.corpus import write_corpus
from compiler.build import build
from compiler.cache.store import ENTRY_MAGIC, CompileCache
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Code, Diagnostic, Location
from compiler.runtime.manifest.format import dump_manifest

pytestmark = pytest.mark.fastpath


def test_a_hit_gives_the_bytes_and_the_manifest_of_the_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_corpus(tmp_path / "capabilities", 40, seed=11)
    monkeypatch.chdir(tmp_path)
    uncached = build(["capabilities"], use_cache=False)
    assert uncached.manifest is not None and uncached.manifest_bytes is None
    expected = dump_manifest(uncached.manifest)
    cold = build(["capabilities"], cache_dir=tmp_path / "cache")
    assert cold.manifest_bytes == expected and cold.file_bytes() == expected
    warm = build(["capabilities"], cache_dir=tmp_path / "cache")
    assert warm.manifest_bytes == expected
    assert warm.manifest == uncached.manifest and "digest" not in warm.manifest
    assert dump_manifest(warm.manifest) == expected
    assert warm.diagnostics == uncached.diagnostics


def test_a_manifest_the_writer_refuses_is_stored_and_refused_as_before(tmp_path: Path) -> None:
    store = CompileCache.for_tree(tmp_path / "cache", ["src"], CompileOptions(), tmp_path)
    manifest = {"manifest_version": 1, "capabilities": [{"code": "x", "limit": math.nan}]}
    warning = Diagnostic.warning(Location("src/a.yaml", 3, 5), Code("some-code", "a test code"),
                                 "a message")
    store.store_result("key", CompileResult(manifest, (warning,)))
    loaded = store.load_result("key")
    assert loaded is not None and loaded.manifest_bytes is None
    assert math.isnan(loaded.manifest["capabilities"][0]["limit"])  # type: ignore[index]
    assert loaded.diagnostics == (warning,)
    with pytest.raises(ValueError):
        loaded.file_bytes()


def test_stored_bytes_that_are_not_a_manifest_are_a_miss(tmp_path: Path) -> None:
    store = CompileCache.for_tree(tmp_path / "cache", ["src"], CompileOptions(), tmp_path)
    for content in (b"[1, 2]", b"{\"no_digest\": 1}", b"not json"):
        store.store_result("key", CompileResult({"a": 1}, (), content))
        assert store.load_result("key") is None, content


def test_a_changed_byte_anywhere_in_an_entry_is_a_miss(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The HMAC covers the selector, the marshal part and the tail (the manifest bytes, the
    documents): flipping any byte of them, or of the HMAC, makes the entry a miss."""
    write_corpus(tmp_path / "capabilities", 6, seed=5)
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = build(["capabilities"], cache_dir=cache_dir)
    store = CompileCache.for_tree(cache_dir, ["capabilities"], CompileOptions())
    [tree_entry] = cache_dir.glob("*.tree")
    [files_entry] = cache_dir.glob("*.files")
    for entry in (tree_entry, files_entry):
        original = entry.read_bytes()
        start = len(ENTRY_MAGIC)
        for offset in (start, start + 40, len(original) // 2, len(original) - 1):
            changed = bytearray(original)
            changed[offset] ^= 0x01
            kind = entry.suffix[1:]
            selector = bytes(changed[start + 32:start + 64])
            assert store.unseal(kind, bytes(changed), selector) is None, (entry.name, offset)
        entry.write_bytes(original)
    assert store.load_files(), "the untouched pack reads back"
    again = build(["capabilities"], cache_dir=cache_dir)
    assert (again.manifest_bytes, again.diagnostics) == (expected.manifest_bytes,
                                                          expected.diagnostics)


def test_a_tree_entry_for_another_key_is_a_miss_before_any_hmac(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CompileCache.for_tree(tmp_path / "cache", ["src"], CompileOptions(), tmp_path)
    store.store_result("key", CompileResult({"a": 1}, (), None))
    macs: list[str] = []
    real_mac = CompileCache._mac

    def counting(self: CompileCache, kind: str, *parts: bytes | memoryview) -> bytes:
        macs.append(kind)
        return real_mac(self, kind, *parts)

    monkeypatch.setattr(CompileCache, "_mac", counting)
    assert store.load_result("another key") is None
    assert macs == []
    loaded = store.load_result("key")
    assert loaded is not None and loaded.manifest == {"a": 1} and macs == ["tree"]
