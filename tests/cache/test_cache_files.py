"""The per-file pack gives back exactly what was stored (compiler/cache/file_packs.py), and a
cached document answers every position question as its own table does, whether an earlier
compile asked it or not (compiler/cache/position_answers.py)."""

from __future__ import annotations

import functools
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import build as build_module
from compiler.build import build
from compiler.cache import store as cache_module
from compiler.cache.file_packs import pack, unpack
from compiler.cache.position_answers import FileReparse, RecordedPositions
from compiler.compile_result import CompileOptions
from compiler.source.yaml_loader import load_documents
from tests.cache.test_compile_cache import observable
from tests.support.paths import CASES

pytestmark = pytest.mark.fastpath

# What the YAML loader makes: str-keyed dicts, lists, str, int, float, bool, None; plus
# what it must survive: NaN, infinities, -0.0, integers past 64 bits, lone surrogates.
_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 1e-7, 1e16, 5e-324, 1.7976931348623157e308, 0.1])
_ints = st.integers() | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -2**63 - 1])
_text = st.text() | st.sampled_from(["\ud800", "null", "a\x00b", "é"])
_leaves = st.none() | st.booleans() | _ints | _floats | _text
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(_text, inner, max_size=4), max_leaves=20)


def same(left: Any, right: Any) -> bool:
    """Equal and of the same types all the way down (True is not 1, -0.0 is not 0.0)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return (math.isnan(left) and math.isnan(right)) or (
            left == right and math.copysign(1, left) == math.copysign(1, right))
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(same, left, right))
    return bool(left == right)


def _round_trip(files: dict[str, Any]) -> dict[str, Any]:
    stored = unpack(pack(files))
    assert stored.keys() == files.keys()
    return stored


def test_a_file_whose_key_reads_null_is_kept() -> None:
    # Found by the test below on a CI run: the key, not the file, held "null".
    files = {"null": ([("", 0, [], 3)], [("", 1, 2, "error", "code", "text")])}
    assert _round_trip(files)["null"][0][0][3] == 3


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _values, max_size=4), _text)
def test_every_file_reads_back_as_exactly_what_was_stored(datas: dict[str, Any],
                                                          path: str) -> None:
    files = {key: ([(path, 0, data, 3)], [(path, 1, 2, "error", "code", "text")])
             for key, data in datas.items()}
    stored = _round_trip(files)
    for key, (documents, diagnostics) in files.items():
        [(stored_path, index, data, line)] = stored[key][0]
        assert same(stored_path, path) and index == 0 and line == 3
        assert same(data, documents[0][2])
        assert [tuple(item) for item in stored[key][1]] == diagnostics


@pytest.mark.parametrize("hostile", [None, math.nan, math.inf, -math.inf, 2**64, "\udcff",
                                     "null", -0.0, True, 1e-7])
def test_values_json_cannot_carry_exactly_take_the_marshal_path(hostile: Any) -> None:
    files = {"plain": ([("a.yaml", 0, {"k": [1, 2.5, "x"]}, 1)], []),
             "hostile": ([("b.yaml", 0, {"k": [hostile]}, 1)], [])}
    stored = _round_trip(files)
    assert same(stored["hostile"][0][0][2], {"k": [hostile]})
    assert same(stored["plain"][0][0][2], {"k": [1, 2.5, "x"]})


_YAML = [
    "top:\n  name:   Lookup\n  list:\n    - one\n    - {k: v, j: [1, 2]}\n",
    "a: &x {b: 1}\nlater:\n  d: *x\n",
    "--- \n- 1\n- [2, 3]\n",
    "k: v\n'quoted key': {deep: {deeper: 1}}\n",
]


def _questions(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path, (*path, "absent"), (*path, 99)]
    children = data.items() if isinstance(data, dict) else enumerate(data) \
        if isinstance(data, list) else ()
    for key, value in children:
        found += _questions(value, (*path, key))
    return found


@pytest.mark.parametrize("text", _YAML)
def test_recorded_positions_answer_as_the_table_whether_asked_before_or_not(text: str) -> None:
    loaded, problems = load_documents(text)
    assert problems == []
    for position, document in enumerate(loaded):
        table = document.positions
        questions = [(path, key) for path in _questions(document.data) for key in (False, True)]
        fresh = RecordedPositions(table)
        assert [fresh.locate(p, key=k) for p, k in questions] == \
            [table.locate(p, key=k) for p, k in questions]
        parses: list[int] = []

        def parse(parses: list[int] = parses) -> list[Any]:
            parses.append(1)
            return list(load_documents(text)[0])

        # Half the questions remembered: those are answered without a parse, the rest
        # from a table parsed again once.
        half = dict(list(fresh.answers.items())[::2])
        reparse = FileReparse(parse)
        stored = RecordedPositions(None, half, functools.partial(reparse.table, position))
        for path, key in questions[::2]:
            assert stored.locate(path, key=key) == table.locate(path, key=key)
        assert parses == []
        assert [stored.locate(p, key=k) for p, k in questions] == \
            [table.locate(p, key=k) for p, k in questions]
        assert len(parses) == 1


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = build_module._documents_of

    def counting(display_path: str, raw: bytes, variables: Any) -> Any:
        parsed.append(display_path)
        return real(display_path, raw, variables)

    monkeypatch.setattr(build_module, "_documents_of", counting)
    return parsed


def test_a_per_file_hit_asks_nothing_new_and_parses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CASES / "good" / "api-bindings" / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = build(["src"], use_cache=False)
    build(["src"], cache_dir=cache_dir)
    for tree_entry in cache_dir.glob("*.tree"):
        tree_entry.unlink()
    parsed = _count_parses(monkeypatch)
    again = build(["src"], cache_dir=cache_dir)
    assert (again.file_bytes(), again.diagnostics) == (expected.file_bytes(),
                                                        expected.diagnostics)
    assert parsed == []


def test_a_new_question_about_a_cached_file_parses_that_file_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    first = "apiVersion: capc/v1\nkind: Capability\n\n\ncode:   shared\nname: First\n" \
        "type: internal\n"
    (source / "a.yaml").write_text(first)
    (source / "b.yaml").write_text(first.replace("shared", "other").replace("First", "B"))
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    build(["src"], cache_dir=cache_dir)
    # A new file reuses a.yaml's code: the duplicate points at a.yaml's `code`, which no
    # earlier compile asked about.
    (source / "c.yaml").write_text(first.replace("First", "Second"))
    parsed = _count_parses(monkeypatch)
    cached = build(["src"], cache_dir=cache_dir)
    expected = build(["src"], use_cache=False)
    assert cached.diagnostics == expected.diagnostics
    assert any(d.code == "duplicate-code" and "src/a.yaml:5:9" in d.message
               for d in cached.diagnostics), cached.diagnostics
    assert parsed == ["src/a.yaml"]


# Templates are never stored per file (their documents depend on the variables): a case
# of templates alone would only compile three times for nothing (one is a rendering bomb).
ALL_CASES = sorted(p.parent for p in CASES.glob("*/*/src")
                   if p.is_dir() and not all(f.name.endswith(".j2")
                                             for f in p.rglob("*") if f.is_file()))


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_cached_files_that_remember_no_answer_compile_as_uncached(
        case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every position of every cached document found again by parsing, for every golden
    case (good, bad, hostile): the same manifest bytes and diagnostics as no cache."""
    monkeypatch.chdir(case)
    flags = (case / "flags").read_text().split() if (case / "flags").exists() else []
    options = CompileOptions(strict="--strict" in flags,
                             allow_private_networks="--allow-private-networks" in flags)
    cache_dir = tmp_path / "cache"
    uncached = build(["src"], options=options, use_cache=False)
    with monkeypatch.context() as patched:
        patched.setattr(cache_module, "answers_of", lambda document: {})
        build(["src"], options=options, cache_dir=cache_dir)
    for tree_entry in cache_dir.glob("*.tree"):
        tree_entry.unlink()
    per_file = build(["src"], options=options, cache_dir=cache_dir)
    assert observable(per_file) == observable(uncached)


def test_parse_source_wraps_each_table_in_the_locator_it_is_given() -> None:
    """build asks parse_source for recording positions: each answer is the table's, and
    each question is kept for the pack."""
    from compiler.cache.position_answers import RecordedPositions, answers_of
    from compiler.source.documents import parse_source

    raw = b"apiVersion: capc/v1\nkind: Capability\ncode: a\n---\ncode: b\nname: B\n"
    plain, _ = parse_source("a.yaml", raw, {})
    recording, _ = parse_source("a.yaml", raw, {}, locator=RecordedPositions)
    assert len(plain) == len(recording) == 2
    assert all(isinstance(d.positions, RecordedPositions) for d in recording)
    assert answers_of(plain[1]) == {}  # a plain table records nothing
    for one, other in zip(plain, recording, strict=True):
        for path, key in ((("code",), False), (("name",), True), (("missing", 0), False)):
            assert other.location(path, key=key) == one.location(path, key=key)
    # Lines of the file: the second document starts on line 5.
    assert answers_of(recording[1]) == {(("code",), False): (5, 7), (("name",), True): (6, 1),
                                        (("missing", 0), False): (5, 1)}
