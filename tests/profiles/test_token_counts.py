"""Token counts of tool definitions against an independent computation of OpenAI's recipe.

The reference here is written apart from compiler.profiles.tokens: OpenAI's cookbook
function (``num_tokens_for_tools``, gpt-4o constants) as published, over tiktoken's own
BPE (not toktok's) built from the digest-checked o200k vocabulary. Both must agree to
the token on every definition, and the vocabulary check must refuse a changed one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import tiktoken

from compiler.profiles.tokens import (
    O200K_SHA256,
    Definition,
    EncodingUnavailable,
    anthropic_tokens,
    check_vocabulary,
    definition_size_problem,
    o200k,
    openai_tokens,
    tiktoken_reference,
)

toktok = pytest.importorskip("toktok")

@pytest.fixture(scope="module")
def reference_encoding() -> tiktoken.Encoding:
    # tiktoken's BPE over the vocabulary, whose digest tiktoken_reference checks first.
    encoding: tiktoken.Encoding = tiktoken_reference()
    return encoding


def cookbook_tool_tokens(functions: list[dict[str, Any]], encoding: tiktoken.Encoding) -> int:
    """OpenAI cookbook, "How to count tokens with tiktoken", num_tokens_for_tools (gpt-4o)."""
    func_init, prop_init, prop_key, enum_init, enum_item, func_end = 7, 3, 3, -3, 3, 12
    func_token_count = 0
    if len(functions) > 0:
        for f in functions:
            func_token_count += func_init
            function = f["function"]
            f_name = function["name"]
            f_desc = function["description"]
            if f_desc.endswith("."):
                f_desc = f_desc[:-1]
            line = f_name + ":" + f_desc
            func_token_count += len(encoding.encode(line))
            if len(function["parameters"]["properties"]) > 0:
                func_token_count += prop_init
                for key in list(function["parameters"]["properties"].keys()):
                    func_token_count += prop_key
                    p_name = key
                    p_type = function["parameters"]["properties"][key]["type"]
                    p_desc = function["parameters"]["properties"][key]["description"]
                    if "enum" in function["parameters"]["properties"][key].keys():  # noqa: SIM118
                        func_token_count += enum_init
                        for item in function["parameters"]["properties"][key]["enum"]:
                            func_token_count += enum_item
                            func_token_count += len(encoding.encode(item))
                    if p_desc.endswith("."):
                        p_desc = p_desc[:-1]
                    line = f"{p_name}:{p_type}:{p_desc}"
                    func_token_count += len(encoding.encode(line))
        func_token_count += func_end
    return func_token_count


FUNCTIONS = [
    {"type": "function", "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string",
                         "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature.",
                     "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"]}}},
    {"type": "function", "function": {
        "name": "crm_search_contacts",
        "description": "Search contacts in the CRM by name, e-mail or company.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Free text; 3 characters or more."},
            "limit": {"type": "integer", "description": "At most this many results"}}}}},
    {"type": "function", "function": {
        "name": "ping", "description": "Check the service answers.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "übersetze", "description": "Übersetzt Text ins Japanische: 日本語に翻訳します。",
        "parameters": {"type": "object", "properties": {
            "text": {"type": "string", "description": "Der Text — mit Emoji 🧠."},
            "tone": {"type": "string", "description": "Ton", "enum": ["formell", "locker",
                                                                       "neutral"]}}}}},
]


def _definition(function: dict[str, Any]) -> Definition:
    inner = function["function"]
    return Definition(inner["name"], inner["description"], inner["parameters"])


@pytest.mark.parametrize("index", range(len(FUNCTIONS)))
def test_each_definition_counts_as_the_cookbook_recipe(
    index: int, reference_encoding: tiktoken.Encoding
) -> None:
    function = FUNCTIONS[index]
    # The recipe's total for one function includes the per-request 12.
    expected = cookbook_tool_tokens([function], reference_encoding) - 12
    assert openai_tokens([_definition(function)], o200k()) == [expected]


def test_a_set_of_definitions_sums_to_the_recipe(reference_encoding: tiktoken.Encoding) -> None:
    counted = openai_tokens([_definition(function) for function in FUNCTIONS], o200k())
    assert sum(counted) + 12 == cookbook_tool_tokens(FUNCTIONS, reference_encoding)
    assert len(set(counted)) == len(counted)  # distinct definitions, distinct figures


def test_anthropic_estimate_is_the_tokens_of_the_definitions_json(
    reference_encoding: tiktoken.Encoding,
) -> None:
    definition = _definition(FUNCTIONS[0])
    text = json.dumps({"name": definition.name, "description": definition.description,
                       "input_schema": definition.input_schema},
                      separators=(",", ":"), ensure_ascii=False)
    assert anthropic_tokens([definition], o200k()) == [len(reference_encoding.encode(text))]


def test_the_vocabulary_digest_is_checked() -> None:
    tokens = list(toktok._encoding("o200k_base").token_byte_values())
    check_vocabulary(tokens)
    tokens[1000] = b"tampered"
    with pytest.raises(EncodingUnavailable, match=O200K_SHA256):
        check_vocabulary(tokens)
    with pytest.raises(EncodingUnavailable):
        check_vocabulary(tokens[:-1])


def test_a_huge_or_deep_schema_is_reported_not_counted() -> None:
    huge = Definition("huge", "x", {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": "d" * 100} for i in range(3000)}})
    assert "characters" in (definition_size_problem(huge) or "")
    deep: dict[str, Any] = {"type": "object"}
    node = deep
    for _ in range(40):
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"a": child}
        node = child
    assert "deeper" in (definition_size_problem(Definition("deep", "x", deep)) or "")
    assert definition_size_problem(_definition(FUNCTIONS[0])) is None
