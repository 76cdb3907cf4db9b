"""The manifest written from stored entry bytes (compiler/cache/entry_fragments.py) is the
manifest a full dump writes, byte for byte, and only new or replaced entries are dumped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.corpus import write_corpus
from compiler import compile_result, pipeline
from compiler.build import build
from compiler.cache import entry_fragments
from compiler.cache.store import CompileCache
from compiler.compile_result import CompileResult
from compiler.pipeline import CompileOptions
from compiler.runtime.manifest import format as manifest_format
from compiler.runtime.manifest.format import dump_manifest, value_bytes
from tests.cache.test_compile_cache import options_for
from tests.support.paths import CASES

GOOD_CASES = sorted(p.parent for p in (CASES / "good").glob("*/src") if p.is_dir())

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_value_bytes_are_the_json_modules(value: Any) -> None:
    try:
        compact = json.dumps(value, sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False, allow_nan=False).encode("utf-8")
        indented = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False,
                              allow_nan=False).encode("utf-8")
    except (ValueError, TypeError):
        with pytest.raises((ValueError, TypeError)):
            value_bytes(value)
        return
    assert value_bytes(value) == (compact, indented)


def _seen(result: CompileResult) -> tuple[bytes | None, list[dict[str, object]]]:
    """The file bytes the result writes and its diagnostics."""
    content = result.file_bytes() if result.manifest is not None else None
    return content, [d.as_dict() for d in result.diagnostics]


def _reference(options: CompileOptions | None = None) -> tuple[bytes | None, list[Any]]:
    """The general path: no cache, the whole manifest dumped at once."""
    result = build(["src"], options=options, use_cache=False)
    content = dump_manifest(result.manifest) if result.manifest is not None else None
    return content, [d.as_dict() for d in result.diagnostics]


def _dumped(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The codes of the entries the compiles dump from now on (not taken from the store)."""
    codes: list[str] = []
    original = entry_fragments.EntryFragments._made

    def counting(self: Any, entry: Any, made: Any) -> Any:
        codes.append(entry.code)
        return original(self, entry, made)

    monkeypatch.setattr(entry_fragments.EntryFragments, "_made", counting)
    return codes


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_edits_write_the_bytes_of_a_full_dump(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = write_corpus(tmp_path / "src", 120, seed=11)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    first = build(["src"], cache_dir=cache)
    assert _seen(first) == _reference()
    entries = json.loads(first.file_bytes())["capabilities"]
    overridden = {entry["code"] for entry in entries
                  if (entry.get("tool") or {}).get("overrides")}
    assert 0 < len(overridden) < len(entries) // 4
    dumped = _dumped(monkeypatch)
    api_file, edited_code = next(
        (path, code) for path in corpus.files if path.name.endswith("-api.yaml")
        and (code := path.read_text(encoding="utf-8").split("\ncode: ", 1)[1].split()[0])
        not in overridden)
    _edit(api_file, "description: ", "description: Edited. ")
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    # The edited file's entry and the entries ToolOverrides replaced; the rest was stored.
    assert sorted(dumped) == sorted(overridden | {edited_code})
    # An override of an unchanged file's tool: that entry is replaced, so dumped too (and
    # the edited file's again: one new entry does not rewrite all the stored ones).
    tool = next(entry for entry in entries if entry["code"] not in overridden | {edited_code}
                and entry.get("tool"))
    (tmp_path / "src" / "late-override.yaml").write_text(
        "apiVersion: capc/v1\nkind: ToolOverride\n"
        f"tool: {tool['tool']['name']}\ndescription: Overridden.\n", encoding="utf-8")
    dumped.clear()
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert sorted(dumped) == sorted(overridden | {edited_code, tool["code"]})
    # The override removed: that entry is the stored one again.
    (tmp_path / "src" / "late-override.yaml").unlink()
    dumped.clear()
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert sorted(dumped) == sorted(overridden | {edited_code})


@pytest.mark.parametrize("case", GOOD_CASES, ids=lambda p: p.name)
def test_every_good_case_edited_writes_the_bytes_of_a_full_dump(
        case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(case / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    options = options_for(case)
    assert _seen(build(["src"], options=options, cache_dir=cache)) == _reference(options)
    edited = sorted((tmp_path / "src").rglob("*.yaml"))[-1]
    edited.write_bytes(edited.read_bytes() + b"\n# edited\n")
    assert _seen(build(["src"], options=options, cache_dir=cache)) == _reference(options)
    assert _seen(build(["src"], options=options, cache_dir=cache)) == _reference(options)


def test_a_value_the_json_module_refuses_takes_the_general_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path / "src", 20, seed=3)
    monkeypatch.chdir(tmp_path)

    def refusing(value: Any) -> tuple[bytes, bytes]:
        raise ValueError("Out of range float values are not JSON compliant")

    monkeypatch.setattr(manifest_format, "value_bytes", refusing)
    result = build(["src"], cache_dir=tmp_path / "cache")
    assert _seen(result) == _reference()


def test_a_result_read_back_from_its_bytes_is_the_compiled_one(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    write_corpus(tmp_path / "src", 20, seed=5)
    monkeypatch.chdir(tmp_path)
    compiled = build(["src"], use_cache=False)
    assert compiled.manifest is not None
    content = dump_manifest(compiled.manifest)
    lazy = CompileResult.from_file_bytes(content, compiled.diagnostics)
    assert lazy == compiled and lazy.manifest == compiled.manifest
    assert lazy.file_bytes() == content
    with pytest.raises(AttributeError):
        lazy.diagnostics = ()  # type: ignore[misc]


def test_whether_a_result_compiled_is_known_without_reading_its_bytes_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``capc compile`` asks whether there is a manifest and then writes the bytes: the
    question must not parse the file (a 2,000-file manifest costs about 16 ms to read)."""
    write_corpus(tmp_path / "src", 10, seed=6)
    monkeypatch.chdir(tmp_path)
    compiled = build(["src"], use_cache=False)
    content = dump_manifest(compiled.manifest)
    lazy = CompileResult.from_file_bytes(content, compiled.diagnostics)
    read: list[bytes] = []
    monkeypatch.setattr(compile_result, "read_back", lambda data: read.append(data) or {})
    assert lazy.compiled and compiled.compiled and read == []
    failed = CompileResult(None, compiled.diagnostics)
    assert not failed.compiled and failed.manifest is None


def test_many_new_entries_are_stored_and_a_few_are_dumped_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored bytes are rewritten when over one in eight entries is new (a checkout of
    another branch), not for one edited file: either way the file is a full dump's."""
    corpus = write_corpus(tmp_path / "src", 64, seed=13)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    entries = json.loads(build(["src"], cache_dir=cache).file_bytes())["capabilities"]
    overridden = {entry["code"] for entry in entries
                  if (entry.get("tool") or {}).get("overrides")}
    api_files = [path for path in corpus.files if path.name.endswith("-api.yaml")
                 and path.read_text(encoding="utf-8").split("\ncode: ", 1)[1].split()[0]
                 not in overridden]
    dumped = _dumped(monkeypatch)
    for path in api_files:  # well over one entry in eight changes
        _edit(path, "description: ", "description: Branch. ")
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert len(dumped) == len(overridden) + len(api_files) > len(entries) // 8
    for edited in (1, 2):  # one file, then another: the first's new entry is not stored
        _edit(api_files[edited], "description: ", "description: Once more. ")
        dumped.clear()
        assert _seen(build(["src"], cache_dir=cache)) == _reference()
        assert len(dumped) == len(overridden) + edited


@pytest.mark.parametrize("payload", [
    "not a mapping", {"key": "not rows"}, {"key": [(0, 10**9, 5, 10)]}, [(1, 2, 3)]])
def test_a_stored_entry_of_another_shape_is_not_used(
        payload: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path / "src", 20, seed=17)
    monkeypatch.chdir(tmp_path)
    build(["src"], cache_dir=tmp_path / "cache")
    store = CompileCache.for_tree(tmp_path / "cache", ["src"], CompileOptions())
    stored = store.read_entry(entry_fragments.ENTRY_KIND)
    assert stored is not None and stored[1]
    if isinstance(payload, dict):  # every file's key, with rows that do not fit the tail
        payload = {key: payload["key"] for key in stored[0]}
    store.write_entry(entry_fragments.ENTRY_KIND, payload, b"{}")
    edited = sorted((tmp_path / "src").rglob("*-api.yaml"))[0]
    _edit(edited, "description: ", "description: Edited. ")
    assert _seen(build(["src"], cache_dir=tmp_path / "cache")) == _reference()


def test_indented_bytes_are_kept_once_in_the_tree_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold compile keeps only the compact bytes in the entries' tail (the tree entry's
    manifest holds the indented ones); without that tree entry, every entry is dumped
    again and the file is still a full dump's."""
    write_corpus(tmp_path / "src", 40, seed=19)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    entries = json.loads(build(["src"], cache_dir=cache).file_bytes())["capabilities"]
    store = CompileCache.for_tree(cache, ["src"], CompileOptions())
    stored = store.read_entry(entry_fragments.ENTRY_KIND)
    assert stored is not None
    rows = [row for file_rows in stored[0].values() for row in file_rows]
    assert rows and all(start + compact == end for _, start, compact, end in rows)
    assert len(stored[1]) == sum(compact for _, _, compact, _ in rows)
    dumped = _dumped(monkeypatch)
    (cache / f"{store.tree_identity}.tree").unlink()
    _edit(sorted((tmp_path / "src").rglob("*-api.yaml"))[0], "description: ",
          "description: Edited. ")
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert len(dumped) == len(entries)


@pytest.mark.parametrize("general", ["no", "yes", "lost"])
def test_stand_ins_write_the_bytes_of_whole_entries(
        general: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no override in the tree, an api capability whose bytes are stored is a
    stand-in (pipeline._build_entries): the file and diagnostics are an uncached compile's,
    also when the manifest takes the general path (``general``: every entry built whole
    then), or a stand-in's stored bytes are not found when written ("lost": never the
    stand-in's own bytes); with an override, every entry is built whole."""
    corpus = write_corpus(tmp_path / "src", 60, seed=31)
    for path in corpus.files:
        if path.name.endswith("-override.yaml"):
            path.unlink()
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    stand_ins: list[str] = []
    real_stored_entry = pipeline.stored_entry

    def counted(document: Any) -> Any:
        stand_ins.append(document.data["code"])
        return real_stored_entry(document)

    monkeypatch.setattr(pipeline, "stored_entry", counted)
    if general == "yes":
        monkeypatch.setattr(entry_fragments.EntryFragments, "manifest_result",
                            lambda self, model, diagnostics: None)
    if general == "lost":
        monkeypatch.setattr(entry_fragments.EntryFragments, "_fragment",
                            lambda self, entry: None)
    api_files = sorted((tmp_path / "src").rglob("*-api.yaml"))
    _edit(api_files[0], "description: ", "description: Edited. ")
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert len(stand_ins) == len(api_files) - 1
    (tmp_path / "src" / "late-override.yaml").write_text(
        "apiVersion: capc/v1\nkind: ToolOverride\ntool: nowhere\ndescription: Overridden.\n",
        encoding="utf-8")
    _edit(api_files[1], "description: ", "description: Edited. ")
    stand_ins.clear()
    assert _seen(build(["src"], cache_dir=cache)) == _reference()
    assert stand_ins == []
