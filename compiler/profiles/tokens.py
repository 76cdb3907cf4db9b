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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from types import MappingProxyType
from typing import Any, Protocol

try:  # the faster writer when installed (capc[fast], a default); json otherwise
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None  # type: ignore[assignment]

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
MAPPINGS = (dict, MappingProxyType)
LISTS = (list, tuple)


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
            "exact token counts need the o200k encoding: install capc with the budget extra "
            "(capc[budget], which brings toktok-rs)"
        ) from None
    encoding = toktok._encoding(ENCODING_NAME)
    check_vocabulary(encoding.token_byte_values())

    def count(texts: Sequence[str]) -> list[int]:
        counts: list[int] = encoding.count_batch(list(texts), 1, False)
        return counts

    return count


# tiktoken's split pattern of o200k_base (tiktoken_ext.openai_public), for the reference.
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])


def tiktoken_reference() -> Any:
    """tiktoken's own BPE (a ``tiktoken.Encoding``) over the digest-checked vocabulary: an
    independent implementation for tests and benchmarks (needs tiktoken and toktok-rs)."""
    import tiktoken
    import toktok

    tokens = toktok._encoding(ENCODING_NAME).token_byte_values()
    check_vocabulary(tokens)
    return tiktoken.Encoding(
        name="o200k_base_reference", pat_str=O200K_PATTERN,
        mergeable_ranks={token: rank for rank, token in enumerate(tokens)},
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018})


def utf8_upper_bound(texts: Sequence[str]) -> list[int]:
    """An upper bound of each text's tokens in any byte-level BPE: its UTF-8 length."""
    return [len(text.encode()) for text in texts]


def check_vocabulary(tokens: Sequence[bytes]) -> None:
    """Refuse a vocabulary whose ``.tiktoken`` form does not hash to OpenAI's digest."""
    digest = hashlib.sha256()
    for rank, token in enumerate(tokens):
        digest.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    if digest.hexdigest() != O200K_SHA256:
        raise EncodingUnavailable(
            f"the installed {ENCODING_NAME} vocabulary hashes to sha256:{digest.hexdigest()}, "
            f"not OpenAI's published sha256:{O200K_SHA256}; reinstall capc[budget]")


def definition_size_problem(definition: Definition, text: str | None = None) -> str | None:
    """Why a definition cannot be counted (too large or too deep), or None; ``text``: its
    :func:`compact_json` when the caller has it already."""
    try:
        size = len(compact_json(definition) if text is None else text)
    except (RecursionError, TypeError, ValueError):
        return "its schema cannot be written as JSON"
    if size > MAX_DEFINITION_CHARS:
        return f"its definition is {size} characters (counted up to {MAX_DEFINITION_CHARS})"
    # Nesting needs an opening bracket per level: a text with few cannot be too deep.
    if text is not None and text.count("{") + text.count("[") <= MAX_DEPTH:
        return None
    if _depth(definition.input_schema) > MAX_DEPTH:
        return f"its schema is nested deeper than {MAX_DEPTH} levels"
    return None


def compact_json(definition: Definition) -> str:
    """The definition's compact JSON, non-ASCII kept (what the Anthropic estimate counts).

    The schema's keys are sorted, so the text, and the count, depend on the definition's
    content only: ``capc compile`` costs schemas as it built them, ``capc budget`` as the
    manifest (written key-sorted) gives them back, and both must count the same tokens.
    """
    head = {"name": definition.name, "description": definition.description}
    if orjson is not None:
        try:
            # A frozen manifest's schemas are read-only proxies: the proxy's own ``copy``
            # hands orjson the dict behind it in C (a Python ``default`` asking
            # ``isinstance(value, Mapping)`` made this 4-6x slower; ``dict(proxy)`` 2-3x).
            # Anything else it is given raises TypeError, which orjson reports.
            schema = orjson.dumps(definition.input_schema, default=MappingProxyType.copy,
                                  option=orjson.OPT_SORT_KEYS)
            text = orjson.dumps(head).decode()
        except orjson.JSONEncodeError as error:  # too deep, or not JSON: say so as json does
            raise ValueError(str(error)) from None
        return f'{text[:-1]},"input_schema":{schema.decode()}}}'
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)
    schema_text = json.dumps(definition.input_schema, separators=(",", ":"),
                             ensure_ascii=False, default=_plain, sort_keys=True)
    return f'{text[:-1]},"input_schema":{schema_text}}}'


@dataclass(frozen=True, slots=True)
class RecipeTexts:
    """The texts OpenAI's recipe counts for some definitions, and each one's fixed tokens.

    Definition ``i`` owns ``texts[ends[i - 1]:ends[i]]``; every text is counted in one
    batch and each definition's share summed from running totals.
    """

    texts: tuple[str, ...]
    fixed: tuple[int, ...]
    ends: tuple[int, ...]

    def tokens(self, count: Counter) -> list[int]:
        """Each definition's tokens under ``count``."""
        # No memo of repeated texts: hashing a text costs about half of what toktok takes
        # to count it, and measured on GitHub's API (7,019 texts, 2,611 distinct) a memo
        # saved nothing, on varied definitions it cost a third more (bench 12a).
        totals = [0, *accumulate(count(self.texts))]
        starts = (0, *self.ends)
        return [fixed + totals[end] - totals[start]
                for fixed, start, end in zip(self.fixed, starts, self.ends, strict=False)]


def recipe_texts(definitions: Sequence[Definition]) -> RecipeTexts:
    """The recipe's texts of every definition: ``name:description`` and per property
    ``key:type:description`` and enum values, with the fixed tokens around them."""
    texts: list[str] = []
    append = texts.append
    fixed: list[int] = []
    ends: list[int] = []
    for definition in definitions:
        description = definition.description
        if description.__class__ is not str:
            description = ""
        elif description.endswith("."):
            description = description[:-1]
        append(f"{definition.name}:{description}")
        schema = definition.input_schema
        fixed.append(FUNCTION_INIT + (_properties(schema, append, 0)
                                      if schema.__class__ in MAPPINGS else 0))
        ends.append(len(texts))
    return RecipeTexts(tuple(texts), tuple(fixed), tuple(ends))


def openai_tokens(definitions: Sequence[Definition], count: Counter) -> list[int]:
    """Each definition's tokens by OpenAI's recipe (without the per-request 12)."""
    return recipe_texts(definitions).tokens(count)


def anthropic_tokens(definitions: Sequence[Definition], count: Counter,
                     texts: Sequence[str] | None = None) -> list[int]:
    """Each definition's estimated tokens on Anthropic (without the per-request prompt);
    ``texts``: their :func:`compact_json`, when the caller has them already."""
    return count(texts if texts is not None else [compact_json(d) for d in definitions])


def _properties(schema: Mapping[str, Any], append: Callable[[str], None], depth: int) -> int:
    """Appends the recipe's texts for ``schema``'s properties; returns their fixed tokens.

    This runs once per property of every counted tool, so it is written for CPython:
    exact type checks (manifest schemas are only ever dicts or read-only proxies, never
    other mappings); ``key in spec`` and ``spec[key]`` rather than ``spec.get(key)``,
    which on a read-only proxy looks up and calls the dict's method each time (2.5x
    slower); the per-property constant added once per object; a recursive call only
    where a property nests.
    """
    properties = schema["properties"] if "properties" in schema else None  # noqa: SIM401
    if properties.__class__ not in MAPPINGS or not properties:
        items = schema["items"] if "items" in schema else None  # noqa: SIM401
        if items.__class__ in MAPPINGS and depth < MAX_DEPTH:
            return _properties(items, append, depth + 1)
        return 0
    fixed = PROPERTY_INIT + PROPERTY_KEY * len(properties)
    for key, spec in properties.items():
        if spec.__class__ not in MAPPINGS:
            append(f"{key}::")
            continue
        kind = spec["type"] if "type" in spec else ""  # noqa: SIM401
        if kind.__class__ is not str:
            kind = _type_name(kind)
        description = spec["description"] if "description" in spec else ""  # noqa: SIM401
        if description.__class__ is not str:
            description = ""
        elif description.endswith("."):
            description = description[:-1]
        append(f"{key}:{kind}:{description}")
        if "enum" in spec and spec["enum"].__class__ in LISTS:
            enum = spec["enum"]
            fixed += ENUM_INIT + ENUM_ITEM * len(enum)
            for item in enum:
                append(item if item.__class__ is str else json.dumps(item))
        if ("properties" in spec or "items" in spec) and depth < MAX_DEPTH:
            fixed += _properties(spec, append, depth + 1)
    return fixed


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Sequence):
        return "|".join(str(item) for item in value)
    return "" if value is None else str(value)


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion (a deep schema cannot crash it)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH + 1:
            break
        if item.__class__ in MAPPINGS:
            stack.extend((child, level + 1) for child in item.values())
        elif item.__class__ in LISTS:
            stack.extend((child, level + 1) for child in item)
    return deepest


def _plain(value: Any) -> Any:
    # Manifest entries are frozen: read-only mappings and tuples write as objects and lists.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot write {type(value).__name__}")
