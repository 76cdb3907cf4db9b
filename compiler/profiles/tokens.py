"""Tokens of tool definitions, offline: OpenAI's o200k encoding and its counting recipe.

The encoding comes from ``toktok-rs`` (the optional extra ``capc[budget]``), whose
vocabularies are compiled into the wheel: nothing is downloaded at compile or test time.
Before first use the vocabulary is written out in tiktoken's ``.tiktoken`` file format
and its sha256 compared with the digest OpenAI publishes for ``o200k_base.tiktoken`` (the
one tiktoken itself checks), so a changed or corrupted vocabulary is refused, not used.

OpenAI counts function definitions with the recipe of its cookbook ("How to count tokens
with tiktoken", ``num_tokens_for_tools``, gpt-4o constants): per function 7 tokens plus
the tokens of ``name:description`` (a final period dropped); when it has properties 3
more, and per property 3 plus ``key:type:description`` (and per enum value 3 plus its
tokens, minus 3 once per enum); 12 per request with functions. The recipe is flat; capc
applies the same rule to nested object properties and array items (an extension, stated
in docs/profiles.md). Anthropic publishes no tokenizer: its figures are o200k tokens of
the definition's compact JSON plus its documented tool-use system prompt, an estimate.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# OpenAI's published sha256 of o200k_base.tiktoken (tiktoken_ext.openai_public).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
ENCODING_NAME = "o200k_base"
# The cookbook's gpt-4o constants.
FUNCTION_INIT, PROPERTY_INIT, PROPERTY_KEY, ENUM_INIT, ENUM_ITEM, FUNCTIONS_END = 7, 3, 3, -3, 3, 12
# Anthropic's documented tool-use system prompt for Claude 4 models (tool_choice auto).
ANTHROPIC_TOOL_PROMPT = 346
# A definition larger than this is reported as uncountable rather than counted: no
# provider accepts it, and counting it would let one hostile schema stall a compile.
MAX_DEFINITION_CHARS = 200_000
MAX_DEPTH = 32


class EncodingUnavailable(Exception):
    """The o200k encoding cannot be used (not installed, or its digest is wrong)."""


class Counter(Protocol):
    """Counts the tokens of many texts at once."""

    def __call__(self, texts: Sequence[str]) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Definition:
    """One tool as a provider is sent it: name, description, JSON Schema of its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@functools.cache
def o200k() -> Counter:
    """The digest-checked o200k_base counter (loaded once per process)."""
    try:
        import toktok
    except ImportError:
        raise EncodingUnavailable(
            "counting tokens needs the o200k encoding: install capc[budget] (toktok-rs)"
        ) from None
    encoding = toktok._encoding(ENCODING_NAME)
    check_vocabulary(encoding.token_byte_values())

    def count(texts: Sequence[str]) -> list[int]:
        counts: list[int] = encoding.count_batch(list(texts), 1, False)
        return counts

    return count


def check_vocabulary(tokens: Sequence[bytes]) -> None:
    """Refuse a vocabulary whose ``.tiktoken`` form does not hash to OpenAI's digest."""
    digest = hashlib.sha256()
    for rank, token in enumerate(tokens):
        digest.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    if digest.hexdigest() != O200K_SHA256:
        raise EncodingUnavailable(
            f"the installed {ENCODING_NAME} vocabulary hashes to sha256:{digest.hexdigest()}, "
            f"not OpenAI's published sha256:{O200K_SHA256}; reinstall capc[budget]")


def definition_size_problem(definition: Definition) -> str | None:
    """Why a definition cannot be counted (too large or too deep), or None."""
    try:
        size = len(compact_json(definition))
    except (RecursionError, TypeError, ValueError):
        return "its schema cannot be written as JSON"
    if size > MAX_DEFINITION_CHARS:
        return f"its definition is {size} characters (counted up to {MAX_DEFINITION_CHARS})"
    if _depth(definition.input_schema) > MAX_DEPTH:
        return f"its schema is nested deeper than {MAX_DEPTH} levels"
    return None


def compact_json(definition: Definition) -> str:
    """The definition's compact JSON (what the Anthropic estimate counts)."""
    return json.dumps({"name": definition.name, "description": definition.description,
                       "input_schema": definition.input_schema},
                      separators=(",", ":"), ensure_ascii=False, default=_plain)


def openai_tokens(definitions: Sequence[Definition], count: Counter) -> list[int]:
    """Each definition's tokens by OpenAI's recipe (without the per-request 12)."""
    texts: list[str] = []
    fixed: list[int] = []
    spans: list[tuple[int, int]] = []
    for definition in definitions:
        start = len(texts)
        texts.append(f"{definition.name}:{_stripped(definition.description)}")
        overhead = FUNCTION_INIT + _properties(definition.input_schema, texts, 0)
        fixed.append(overhead)
        spans.append((start, len(texts)))
    counts = count(texts)
    return [overhead + sum(counts[start:end])
            for overhead, (start, end) in zip(fixed, spans, strict=True)]


def anthropic_tokens(definitions: Sequence[Definition], count: Counter) -> list[int]:
    """Each definition's estimated tokens on Anthropic (without the per-request prompt)."""
    return count([compact_json(definition) for definition in definitions])


def _properties(schema: Any, texts: list[str], depth: int) -> int:
    """Appends the recipe's texts for ``schema``'s properties; returns their fixed tokens."""
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return 0
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        items = schema.get("items")
        return _properties(items, texts, depth + 1) if isinstance(items, Mapping) else 0
    fixed = PROPERTY_INIT
    for key, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        fixed += PROPERTY_KEY
        enum = spec.get("enum")
        if isinstance(enum, Sequence) and not isinstance(enum, str):
            fixed += ENUM_INIT + ENUM_ITEM * len(enum)
            texts.extend(item if isinstance(item, str) else json.dumps(item) for item in enum)
        texts.append(f"{key}:{_type_name(spec.get('type'))}:"
                     f"{_stripped(spec.get('description'))}")
        fixed += _properties(spec, texts, depth + 1)
    return fixed


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Sequence):
        return "|".join(str(item) for item in value)
    return "" if value is None else str(value)


def _stripped(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    return text[:-1] if text.endswith(".") else text


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion (a deep schema cannot crash it)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH + 1:
            break
        if isinstance(item, Mapping):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((child, level + 1) for child in item)
    return deepest


def _plain(value: Any) -> Any:
    # Manifest entries are frozen: read-only mappings and tuples write as objects and lists.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot write {type(value).__name__}")
