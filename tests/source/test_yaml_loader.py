"""The strict loader: YAML 1.2 scalars, refused hazards, positions."""

from __future__ import annotations

import pytest

from compiler.source.documents import parse_source
from compiler.source.yaml_loader import MAX_FILE_BYTES, decode_source, load_documents


def codes(text: str) -> list[tuple[int, int, str]]:
    _, problems = load_documents(text)
    return [(p.line, p.col, p.code.id) for p in problems]


def test_yaml_12_scalars_load_as_written() -> None:
    (document,), problems = load_documents(
        "a: true\nb: null\nc: 12\nd: 0x1f\ne: 0o17\nf: 1.5e3\ng: 2024-01-01\nh: '0777'\n"
        "i: ~\n")
    assert problems == []
    assert document.data == {"a": True, "b": None, "c": 12, "d": 31, "e": 15, "f": 1500.0,
                             "g": "2024-01-01", "h": "0777", "i": None}


@pytest.mark.parametrize("word", ["yes", "No", "ON", "off", "Off", "YES"])
def test_yaml_11_booleans_are_refused(word: str) -> None:
    assert codes(f"name: {word}\n") == [(1, 7, "yaml-ambiguous-bool")]


def test_quoted_yaml_11_words_are_plain_strings() -> None:
    (document,), problems = load_documents("a: 'no'\nb: \"on\"\n")
    assert problems == [] and document.data == {"a": "no", "b": "on"}


def test_non_finite_numbers_are_refused() -> None:
    assert codes("a: .nan\nb: -.inf\n") == [(1, 4, "yaml-non-finite"), (2, 4, "yaml-non-finite")]


def test_octal_and_sexagesimal_are_refused() -> None:
    assert codes("a: 0777\nb: 1:30\n") == [(1, 4, "yaml-ambiguous-number"),
                                           (2, 4, "yaml-ambiguous-number")]


def test_duplicate_keys_report_every_repeat_with_the_first_line() -> None:
    _, problems = load_documents("a: 1\nb: 2\na: 3\na: 4\n")
    assert [(p.line, p.message) for p in problems] == [
        (3, "duplicate key 'a' (first at line 1)"), (4, "duplicate key 'a' (first at line 1)")]


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    found = codes("\n".join(lines) + "\n")
    assert found and found[0][2] == "yaml-alias-bomb"


def test_a_few_aliases_are_fine_and_values_are_independent_copies() -> None:
    (document,), problems = load_documents("h: &h {A: b}\ni: *h\n")
    assert problems == []
    assert document.data["i"] == {"A": "b"} and document.data["i"] is not document.data["h"]


def test_merge_keys_custom_tags_and_non_string_keys_are_refused() -> None:
    assert [c for _, _, c in codes("a: &a {x: 1}\nb:\n  <<: *a\n")] == ["yaml-merge-key"]
    assert [c for _, _, c in codes("a: !!python/name:os.system x\n")] == ["yaml-tag"]
    assert [c for _, _, c in codes("1: x\n")] == ["yaml-key-type"]


def test_positions_of_values_and_keys_are_one_based() -> None:
    (document,), _ = load_documents("top:\n  list:\n    - first\n    - {k: v}\n")
    assert document.positions.locate(("top", "list", 1, "k")) == (4, 11)
    assert document.positions.locate(("top", "list", 1, "k"), key=True) == (4, 8)
    assert document.positions.locate(("top", "list"), key=True) == (2, 3)
    # an unknown path falls back to its nearest located ancestor
    assert document.positions.locate(("top", "list", 1, "missing")) == (4, 7)


def test_multi_document_files_keep_each_document_start() -> None:
    documents, _ = load_documents("a: 1\n---\n# comment\nb: 2\n")
    assert [(d.index, d.line, d.data) for d in documents] == [(0, 1, {"a": 1}), (1, 4, {"b": 2})]


def test_decoding_refuses_large_files_bad_bytes_and_control_characters() -> None:
    text, problem = decode_source(b"x" * (MAX_FILE_BYTES + 1))
    assert text is None and problem is not None and problem.code.id == "file-too-large"
    text, problem = decode_source(b"a: 1\nb: \xff\n")
    assert problem is not None
    assert (problem.line, problem.col, problem.code.id) == (2, 4, "encoding")
    text, problem = decode_source(b"a: 1\nb: x\x07\n")
    assert problem is not None and (problem.line, problem.col) == (2, 5)
    text, problem = decode_source("\ufeffa: 1\n".encode())
    assert problem is None and text == "a: 1\n"


def test_a_broken_file_yields_diagnostics_and_no_documents() -> None:
    documents, diagnostics = parse_source("x.yaml", b"a: 1\na: 2\n", {})
    assert documents == []
    assert [(d.path, d.line, d.col, d.code) for d in diagnostics] == [
        ("x.yaml", 2, 1, "yaml-duplicate-key")]


def test_single_letters_are_plain_strings() -> None:
    # PyYAML and most readers take y/n as strings; coordinates named x/y must just work.
    (document,), problems = load_documents("y: n\nx: Y\n")
    assert problems == [] and document.data == {"y": "n", "x": "Y"}
