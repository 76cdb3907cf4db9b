"""The loader's fast paths answer exactly as the slow ones: tags by first character, scalar
leaves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from compiler.source.yaml_loader import MAX_ALIASES, load_documents
from compiler.source.yaml_resolver import StrictParser

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
