"""The fast counting path against the cookbook recipe on many generated definitions.

``compiler.profiles.tokens`` reads schemas with exact type checks and subscripts, writes
read-only proxies through orjson and builds the recipe's texts once: none of that may
change a figure. Generated definitions (names, descriptions with and without a final
period, non-ASCII text, enums) are counted frozen, as a manifest holds them, and compared
with the recipe as OpenAI publishes it, run on tiktoken's own BPE.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.profiles.tokens import (
    Definition,
    anthropic_tokens,
    compact_json,
    definition_size_problem,
    o200k,
    openai_tokens,
    recipe_texts,
    tiktoken_reference,
    utf8_upper_bound,
)
from compiler.runtime.manifest.fields import freeze
from tests.profiles.test_token_counts import cookbook_tool_tokens

pytest.importorskip("toktok")

# Unassigned code points (Cn in Python 3.11's Unicode 14 tables) are left out: the two
# BPE implementations split text by regexes with different Unicode versions, and a code
# point one of them knows as a letter and the other does not (U+323B0, say) can move a
# token boundary. docs/profiles.md states this limit of the offline count.
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn")),
                max_size=40)
_DESCRIPTION = st.one_of(_TEXT, _TEXT.map(lambda text: text + "."))
_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
_PROPERTY = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "boolean", "number"]),
     "description": _DESCRIPTION},
    optional={"enum": st.lists(_TEXT.filter(bool), min_size=1, max_size=4)})
_FUNCTION = st.builds(
    lambda name, description, properties: {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties}}},
    _KEY, _DESCRIPTION, st.dictionaries(_KEY, _PROPERTY, max_size=6))


def _frozen(function: dict[str, Any]) -> Definition:
    inner = function["function"]
    return Definition(inner["name"], inner["description"], freeze(inner["parameters"]))


class _Ordinary:
    """The reference encoding for the cookbook function, with text that spells a special
    token ("<|endoftext|>") encoded as ordinary text, as a tool's description is sent:
    the cookbook's ``encode`` would refuse it; capc counts it as text."""

    encode = staticmethod(lambda text: _REFERENCE.encode_ordinary(text))


@settings(max_examples=150, deadline=None)
@given(functions=st.lists(_FUNCTION, min_size=1, max_size=8))
def test_generated_definitions_count_as_the_recipe(functions: list[dict[str, Any]]) -> None:
    encoding: Any = _Ordinary
    counted = openai_tokens([_frozen(function) for function in functions], o200k())
    expected = [cookbook_tool_tokens([function], encoding) - 12 for function in functions]
    assert counted == expected


@settings(max_examples=80, deadline=None)
@given(function=_FUNCTION)
def test_a_frozen_definition_writes_and_counts_like_the_plain_one(
    function: dict[str, Any],
) -> None:
    frozen = _frozen(function)
    inner = function["function"]
    plain = Definition(inner["name"], inner["description"], inner["parameters"])
    # The schema's keys sorted: the count depends on content, not on how it was built.
    schema = json.dumps(plain.input_schema, separators=(",", ":"), ensure_ascii=False,
                        sort_keys=True)
    text = json.dumps({"name": plain.name, "description": plain.description,
                       "input_schema": json.loads(schema)},
                      separators=(",", ":"), ensure_ascii=False)
    assert compact_json(frozen) == compact_json(plain) == text
    assert anthropic_tokens([frozen], o200k()) == [len(_REFERENCE.encode_ordinary(text))]


def test_nested_objects_and_array_items_follow_the_same_rule() -> None:
    # The recipe is flat; capc's stated extension counts nested properties as top-level
    # ones (3 for the block, 3 plus key:type:description each), array items included.
    nested = Definition("f", "d", freeze({"type": "object", "properties": {
        "a": {"type": "object", "description": "x", "properties": {
            "b": {"type": "string", "description": "y"}}},
        "c": {"type": "array", "description": "z", "items": {
            "type": "object", "properties": {"e": {"type": "integer", "description": "w"}}}},
    }}))
    recipe = recipe_texts([nested])
    assert recipe.texts == ("f:d", "a:object:x", "b:string:y", "c:array:z", "e:integer:w")
    assert recipe.fixed == (7 + (3 + 3 * 2) + (3 + 3) + (3 + 3),)
    encoding = _REFERENCE
    assert openai_tokens([nested], o200k()) == [
        recipe.fixed[0] + sum(len(encoding.encode(text)) for text in recipe.texts)]


def test_the_byte_bound_is_never_below_the_count() -> None:
    definitions = [_frozen(function) for function in _SAMPLES]
    exact = recipe_texts(definitions).tokens(o200k())
    bound = recipe_texts(definitions).tokens(utf8_upper_bound)
    assert all(low <= high for low, high in zip(exact, bound, strict=True))


def test_text_spelling_a_special_token_counts_as_ordinary_text() -> None:
    special = Definition("f", "<|endoftext|> and <|endofprompt|>", freeze({}))
    assert openai_tokens([special], o200k()) == [
        7 + len(_REFERENCE.encode_ordinary("f:<|endoftext|> and <|endofprompt|>"))]


def test_a_schema_that_is_not_json_is_reported_not_counted() -> None:
    odd = Definition("odd", "d", {"type": "object", "properties": {"a": {"enum": {1, 2}}}})
    assert definition_size_problem(odd) == "its schema cannot be written as JSON"


# tiktoken's BPE over the digest-checked vocabulary (built once: it takes a second).
_REFERENCE: tiktoken.Encoding = tiktoken_reference()
_SAMPLES = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather now.",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string", "description": "City"},
                                      }}}},
    {"type": "function", "function": {"name": "übersetze", "description": "日本語に翻訳",
                                      "parameters": {"type": "object", "properties": {}}}},
]
