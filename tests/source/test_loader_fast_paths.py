"""The loader's fast paths answer exactly as the slow ones: tags by first character, scalar
leaves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from compiler.source.yaml_loader import MAX_ALIASES, load_documents
from compiler.source.yaml_resolver import REMEMBERED_LENGTH, StrictParser

PLAIN_TEXTS = ["no", "Yes", "ON", "off", "true", "False", "null", "~", "", "12", "-7", "0x1f",
               "0o17", "0777", "1:30", "1.5e3", ".inf", ".nan", "<<", "2024-01-01", "name",
               "1" * 70, "x" * 70, "0" + "7" * 80]


@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_the_first_character_table_gives_the_resolvers_answer(text: str) -> None:
    parser = StrictParser("")
    try:
        for implicit in [(True, False), (False, True), (False, False), (True, False)]:
            expected = BaseResolver.resolve(parser, ScalarNode, text, implicit)
            assert parser.resolve(ScalarNode, text, implicit) == expected, implicit
        for kind in (MappingNode, SequenceNode):
            assert parser.resolve(kind, None, (True, False)) == BaseResolver.resolve(
                parser, kind, None, (True, False))
    finally:
        parser.dispose()


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=12), st.text(alphabet="0123456789+-._:<~eEnNoOxyYtTfF",
                                                max_size=10)))
def test_any_plain_text_resolves_as_the_base_resolver_says(text: str) -> None:
    parser = StrictParser("")
    try:
        assert parser.resolve(ScalarNode, text, (True, False)) == BaseResolver.resolve(
            parser, ScalarNode, text, (True, False))
    finally:
        parser.dispose()


def test_a_quoted_text_is_a_string_after_the_same_plain_text() -> None:
    text = "a: no\nb: 'no'\nc: 0777\nd: \"0777\"\ne: no\n"
    for _ in range(2):  # a second load answers as the first
        (document,), problems = load_documents(text)
        assert [(p.line, p.code.id) for p in problems] == [
            (1, "yaml-ambiguous-bool"), (3, "yaml-ambiguous-number"), (5, "yaml-ambiguous-bool")]
        assert document.data == {"a": "no", "b": "no", "c": "0777", "d": "0777", "e": "no"}


def test_aliases_of_a_scalar_still_count_toward_the_alias_limit() -> None:
    text = "s: &s leaf\nl: [" + ", ".join(["*s"] * (MAX_ALIASES + 1)) + "]\n"
    _, problems = load_documents(text)
    assert [p.code.id for p in problems] == ["yaml-alias-limit"]


def test_an_aliased_scalar_keeps_its_value_and_its_anchor_position() -> None:
    (document,), problems = load_documents("s: &s 12\nl:\n  - *s\n  - *s\n")
    assert problems == [] and document.data == {"s": 12, "l": [12, 12]}
    assert document.positions.locate(("s",)) == (1, 4)
    # An alias has no position of its own: its nearest located ancestor, the list.
    assert document.positions.locate(("l", 1)) == (3, 3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["no", "yes", "0777", "1e3", "~", "null", "true", "12", "1:30",
                                 "0x1F", ".inf", "word", "2024-01-01", "<<", ""])
                | st.text(alphabet="01:.-+exXnoNOyYtTfF~ab", max_size=8),
                min_size=1, max_size=12))
def test_remembered_tags_are_the_resolved_ones(texts: list[str]) -> None:
    """One compile's parsers share their plain texts' tags: a file loaded with the tags an
    earlier file left gives what a fresh load gives, problems included, and every
    remembered tag is the base resolver's."""
    text = "".join(f"k{index}: {value}\n" for index, value in enumerate(texts))
    fresh = load_documents(text)
    tags: dict[str, str] = {}
    for _ in range(2):  # the first load fills the tags, the second answers from them
        shared = load_documents(text, tags)
        assert repr([d.data for d in shared[0]]) == repr([d.data for d in fresh[0]])  # nan
        assert [(p.line, p.col, p.code.id) for p in shared[1]] == [
            (p.line, p.col, p.code.id) for p in fresh[1]]
    parser = StrictParser("")
    try:
        for value, tag in tags.items():
            assert tag == BaseResolver.resolve(parser, ScalarNode, value, (True, False))
    finally:
        parser.dispose()


def test_only_short_texts_are_remembered() -> None:
    tags: dict[str, str] = {}
    long_text = "x" * (REMEMBERED_LENGTH + 1)
    load_documents(f"a: short\nb: {long_text}\n", tags)
    assert "short" in tags and long_text not in tags


def test_no_path_resolver_is_registered() -> None:
    """StrictParser's descend and ascend steps do nothing: right only while no path
    resolver is registered (one would need the base class's bookkeeping back)."""
    from compiler.source.yaml_resolver import StrictResolver

    assert not StrictResolver.yaml_path_resolvers
    (document,), problems = load_documents("a:\n  - b: [1, {c: d}]\n  - ~\n")
    assert problems == [] and document.data == {"a": [{"b": [1, {"c": "d"}]}, None]}
