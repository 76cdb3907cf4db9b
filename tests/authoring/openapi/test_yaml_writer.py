"""The generated files' fast YAML writer against PyYAML's dumper (render's general path):
the same bytes for every operation of real documents and for awkward texts at every
depth, key and column, or :class:`Unwritable` for the shapes left to PyYAML (a key that
needs ``?``, a text holding a Unicode line separator, a value of another type)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.authoring.openapi.generate import GeneratedTool, ImportSettings, generate
from compiler.authoring.openapi.import_openapi import read_openapi
from compiler.authoring.openapi.operations import list_operations, select_operations
from compiler.authoring.openapi.render import _ordered, dumped_yaml, yaml_text
from compiler.authoring.openapi.server_choice import prefer_https
from compiler.authoring.openapi.yaml_layout import fits
from compiler.authoring.openapi.yaml_scalars import ScalarStyles
from compiler.authoring.openapi.yaml_writer import Unwritable, write_yaml
from tests.authoring.openapi.corpus import CorpusDocument
from tests.authoring.openapi.directory_corpus import directory_corpus
from tests.authoring.openapi.public_corpus import public_corpus

pytestmark = pytest.mark.fastpath


def generated_tools(document: CorpusDocument) -> Iterator[GeneratedTool]:
    """The tools an import of ``document``'s selection makes (in memory, nothing written)."""
    root, _ = read_openapi(document.path, str(document.path))
    root, _ = prefer_https(root)
    operations = list_operations(root)
    if document.selectors:
        operations = select_operations(operations, list(document.selectors), root)
    yield from generate(root, operations, ImportSettings(server=document.server)).tools


def assert_same_bytes(document: CorpusDocument) -> int:
    """Every tool of ``document`` written both ways, byte for byte; how many."""
    count = 0
    for tool in generated_tools(document):
        data = _ordered(tool.data)
        assert write_yaml(data) == dumped_yaml(data), tool.operation.key.label
        count += 1
    return count


@pytest.mark.parametrize("document", [public_corpus("github"), public_corpus("stripe"),
                                      directory_corpus("graph")], ids=lambda d: d.name)
def test_public_documents_render_the_same_bytes(document: CorpusDocument) -> None:
    """CI's subsets of GitHub's, Stripe's and Microsoft Graph's documents: no file is left
    to PyYAML, and each is the bytes PyYAML writes."""
    assert assert_same_bytes(document) > 40


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("CAPC_SLOW_TESTS"), reason="CAPC_SLOW_TESTS=1 runs it")
@pytest.mark.parametrize("name", ["github", "stripe"])
def test_every_public_operation_renders_the_same_bytes(name: str) -> None:
    """Every operation of GitHub's (1,078) and Stripe's (588) documents."""
    assert assert_same_bytes(public_corpus(name, full=True)) > 500


# Texts that each make the emitter choose otherwise: quoting, indicators, words YAML
# reads as other types, special and invisible characters, breaks and lengths around the
# 80-column wrap and the 100-column fold.
AWKWARD = [
    "", " ", "a", "plain words", "it's", "say \"hi\"", "'quoted'", "\"dq\"", "key: value",
    "a:b", "trailing:", "a #not", "a#b", "# comment", "- item", "-item", "-", "? q", "?q",
    "! tag", "&anchor", "*alias", "|", ">", "%x", "@x", "`x`", ",x", "[x]", "{x}", "x, y",
    "yes", "no", "on", "off", "Yes", "NO", "true", "False", "null", "Null", "~", "123",
    "0777", "0x1F", "1e3", "1.5", ".5", "-1", "+1", "1_000", ".inf", "-.Inf", ".nan",
    "2024-01-02", "2024-01-02 10:00:00", "12:30", "1:30:00", "<<", "=", "---", "...",
    "--- x", "... x", "café", "日本語のテキスト", "emoji 😀", "\u00a0nbsp", "a\u00a0b",
    "bidi \u202e evil \u202c", "iso \u2066x\u2069", "zero\u200bwidth", "bom\ufeff",
    "tab\there", "bell\x07", "nul\x00", "esc\x1b[31m", "cr\rlf", "del\x7f", "c1\x9b",
    "surrogate\ud800", "max\U0010ffff", "astral\U0001f600", "back\\slash",
    "two  spaces", " lead", "trail ", "line\nbreak", "line\n\nparagraph", "\nlead break",
    "trail break\n", "trail breaks\n\n", "space \nbreak", "break\n space", "a\n\n\nb",
    "  - markdown\n  - list", "x" * 79, "x" * 81, "x" * 120, "word " * 30,
    ("lorem ipsum dolor " * 12).strip(), ("it's a \"test\" " * 9).strip(),
    ("tab\tin a long text " * 8).strip(), "https://example.com/" + "p/" * 50,
    "see: " + "words and " * 12 + "end", "# " + "hash words " * 10,
]
# Shapes PyYAML keeps: a Unicode line separator (the writer never guesses its breaks).
LEFT_TO_PYYAML = ["nel\x85x", "ls\u2028x", "ps\u2029x"]


def _documents(text: str) -> list[dict[str, Any]]:
    """``text`` as a value at several depths and columns, in a list, in a short (flow)
    mapping, and as a key."""
    return [
        {"description": text, "code": "x"},
        {"options": {"params": {"a_rather_long_argument_name_for_the_column": {
            "type": "string", "description": text, "enum": [text, "b"]}}}},
        {"options": {"list": [text, {"inner": text}, [text]]}},
        {"options": {"short": {"k": text}}, "tags": [text]},
        {"options": {"params": {text: {"type": "string"}}}},
        {"n": {"deeper": {"deeper": {"deeper": {"deeper": {"value": text}}}}}},
    ]


def assert_writes_as_pyyaml(data: dict[str, Any]) -> None:
    """The writer's text is PyYAML's, or it left the data to PyYAML."""
    expected = dumped_yaml(data)
    try:
        written = write_yaml(data)
    except Unwritable:
        assert yaml_text(data) == expected
        return
    assert written == expected


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
def test_awkward_texts_are_written_as_pyyaml_writes_them(text: str) -> None:
    for data in _documents(text):
        assert_writes_as_pyyaml(data)


@pytest.mark.parametrize("text", AWKWARD[1:40], ids=repr)
def test_awkward_values_never_leave_the_fast_path(text: str) -> None:
    """Values and keys of printable text are the writer's own (no quiet fallback)."""
    for data in _documents(text)[:4]:
        assert write_yaml(data) == dumped_yaml(data)


@pytest.mark.parametrize("text", LEFT_TO_PYYAML, ids=repr)
def test_unicode_line_separators_are_left_to_pyyaml(text: str) -> None:
    data = {"description": text}
    with pytest.raises(Unwritable):
        write_yaml(data)
    assert yaml_text(data) == dumped_yaml(data)


@pytest.mark.parametrize("key", ["", "k" * 123, "multi\nline"], ids=repr)
def test_keys_that_need_a_question_mark_are_left_to_pyyaml(key: str) -> None:
    data = {"options": {key: "v"}}
    with pytest.raises(Unwritable):
        write_yaml(data)
    assert yaml_text(data) == dumped_yaml(data)


def test_the_longest_simple_key_is_written() -> None:
    data = {"options": {"k" * 122: "v", "n" * 120: {"m" * 121: 1}}}
    assert write_yaml(data) == dumped_yaml(data)


@pytest.mark.parametrize("value", [0, -1, 10**30, 1.5, -0.0, 1e17, 1e-7, 3.0,
                                   float("inf"), float("-inf"), float("nan"), True, False,
                                   None, [], {}, [1, 2.5, None, True, "x"]], ids=repr)
def test_other_scalars_are_written_as_pyyaml_writes_them(value: Any) -> None:
    for data in ({"default": value}, {"options": {"enum": [value, value]}},
                 {"options": {"a": {"b": [{"c": value}]}}}, {"m": {1: value, 2.5: "x"}}):
        assert write_yaml(data) == dumped_yaml(data)


def test_values_of_other_types_are_left_to_pyyaml() -> None:
    import datetime

    data = {"default": datetime.date(2024, 1, 2)}
    with pytest.raises(Unwritable):
        write_yaml(data)
    assert yaml_text(data) == dumped_yaml(data)


_PIECES = st.sampled_from([
    " ", "  ", "\n", "\n\n", ":", ": ", "#", " #", "-", "- ", "?", "!", "&", "*", "'", "\"",
    "\\", ",", "[", "]", "{", "}", "|", ">", "%", "@", "`", "yes", "no", "null", "~", "12",
    "1.5", "é", "日本", "\u202e", "\u200b", "\ufeff", "\t", "\x07", "\x1b", "\x7f", "\x9b",
    "word", "longerword", "https://example.com/a/b?c=d", "x" * 30])
_TEXTS = st.one_of(st.lists(_PIECES, max_size=40).map("".join),
                   st.text(st.characters(blacklist_characters="\x85\u2028\u2029"),
                           max_size=60))
_KEYS = st.one_of(st.sampled_from(["type", "description", "x-id", "$filter", "@odata.type",
                                   "user.name", "a b", "yes", "1", "-", "? q", "k: v"]),
                  _TEXTS.filter(lambda key: key and "\n" not in key and len(key) < 100))
_SCALARS = st.one_of(_TEXTS, st.integers(-10**6, 10**6), st.floats(), st.booleans(),
                     st.none())
_VALUES = st.recursive(_SCALARS, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=4)),
    max_leaves=12)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=5))
def test_any_generated_shape_is_written_as_pyyaml_writes_it(data: dict[str, Any]) -> None:
    assert_writes_as_pyyaml(data)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, st.integers(0, 60))
def test_any_text_at_any_column_is_written_as_pyyaml_writes_it(text: str, width: int) -> None:
    """The key's length moves the column the text starts at (wraps and folds)."""
    data = {"k" * (width + 1): text, "nested": {"n" * (width + 1): [text, {"v": text}]}}
    assert_writes_as_pyyaml(data)


def test_the_fast_text_loads_back_as_the_data() -> None:
    data = {"options": {"description": "a\n\nb  c", "enum": ["yes", "1", "x: y"]},
            "n": [1.5, None, True]}
    assert yaml.safe_load(write_yaml(data)) == data


@pytest.mark.parametrize("shape", ["{}", "{} y", "'{} y", "{} 'y z", "\t{} y z", "{} y\nz",
                                   "{}  y", "a {} b c d e", "{} y: z", "{}", "{} y\n  - z w",
                                   "a\n\n{} y z\n  b"],
                         ids=["word", "plain", "single", "single-late", "double", "folded",
                              "two-spaces", "words", "colon", "long-word", "markdown",
                              "markdown-late"])
def test_every_column_around_the_wrap_and_the_fold(shape: str) -> None:
    """A text whose first space falls on each column around 80 and 100, after keys of
    several lengths: where the emitter breaks a line, the writer breaks it."""
    for key in (1, 2, 7, 20):
        for length in range(55, 100):
            text = shape.format("x" * length)
            data = {"k" * key: text, "n": {"k" * key: [text]}}
            assert write_yaml(data) == dumped_yaml(data), (key, length)


def _number_like_texts() -> list[str]:
    """Texts made of a number's parts: signs, leading zeros, 8s and 9s, underscores,
    exponents, dots, base prefixes and base-60 colons (EPA's county codes `08`, `09`)."""
    heads = ["", "+", "-"]
    bodies = ["0", "08", "09", "010", "0_9", "1_000", "1e3", "1E5", "1e-3", "1.", ".5", "1.5e3",
              "0o17", "0o8", "0x1F", "0b101", "12:30", "1:2:3", "8", "inf", ".inf", ".nan"]
    return [head + body for head in heads for body in bodies]


@pytest.mark.parametrize("writer", [write_yaml, dumped_yaml], ids=["fast", "pyyaml"])
def test_number_like_text_reads_back_as_text_in_capc(writer: Any) -> None:
    """Text YAML 1.1 leaves plain but capc's YAML 1.2 reader takes for a number (or
    refuses as ambiguous) is quoted, so a generated enum of codes compiles as written."""
    from compiler.source.yaml_loader import load_documents

    texts = _number_like_texts()
    documents, problems = load_documents(writer({"enum": texts}))
    assert problems == []
    assert documents[0].data == {"enum": texts}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4), min_size=1,
                max_size=4))
def test_remembered_choices_are_the_choices_made_afresh(files: list[dict[str, Any]]) -> None:
    """One import's files written with the choices of the files before them (and each
    file twice, so every text is met again, in every place) are PyYAML's bytes."""
    styles = ScalarStyles()
    for data in files * 2:
        try:
            written = write_yaml(data, styles)
        except Unwritable:
            with pytest.raises(Unwritable):
                write_yaml(data)
            continue
        assert written == dumped_yaml(data)


@pytest.mark.parametrize("text", AWKWARD, ids=repr)
def test_awkward_texts_met_again_are_written_as_pyyaml_writes_them(text: str) -> None:
    styles = ScalarStyles()
    for data in _documents(text) * 2:
        try:
            written = write_yaml(data, styles)
        except Unwritable:
            continue
        assert written == dumped_yaml(data)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.lists(_VALUES, min_size=1, max_size=6),
                 st.dictionaries(st.one_of(_KEYS, st.integers(), st.none()), _VALUES,
                                 min_size=1, max_size=6)),
       st.integers(0, 80))
def test_remembered_lengths_measure_as_fits(value: Any, column: int) -> None:
    """The writer's measure of a collection for flow style is :func:`fits`'s."""
    styles = ScalarStyles()
    assert styles.fits(value, column) == fits(value, column)
    assert styles.fits(value, column) == fits(value, column)  # its lengths remembered


# Texts with "more indented" lines (a line starting with a space), which the emitter's
# folded style breaks so that they read back otherwise: written double-quoted, every break
# an escape.
INDENTED = [
    "Possible values are:\n\n- In: the requirement is satisfied if at least one container "
    "exit code\n  (might be multiple if there are multiple containers not restricted\n  by "
    "the 'containerName' field) is in the set of specified values.\n- NotIn: the "
    "requirement is satisfied if at least one container exit code\n  (might be multiple)",
    "a\n  b", " leading space\nsecond line", "x" * 90 + "\n  " + "y " * 60 + "z",
    "first\n\n   indented " + "words " * 30, "tabbed\n\tline", "end\n  indented\n",
]


@pytest.mark.parametrize("text", INDENTED, ids=repr)
def test_texts_with_indented_lines_read_back_as_written(text: str) -> None:
    for data in _documents(text)[:4]:
        assert write_yaml(data) == dumped_yaml(data)
        assert yaml.safe_load(yaml_text(data)) == data


@settings(max_examples=300, deadline=None)
@given(_TEXTS, st.integers(0, 40))
def test_any_text_reads_back_as_written(text: str, width: int) -> None:
    """What a file says is what the document said: every text loads back as itself."""
    data = {"k" * (width + 1): text, "nested": {"description": text, "enum": [text]}}
    assert yaml.safe_load(yaml_text(data)) == data
