"""Arrays and objects on the wire (SPEC §10): query styles and bracket-nested forms.

Every function here takes validated arguments (the argument model has bounded their depth
by the schema) and still walks iteratively, so what a model sends costs time linear in
its size and never the stack. Structure is written by capc (``[``, ``]``, ``=``, ``&``,
``,``); every key and value a model chose is percent-encoded whole, so it can never add a
query key or leave its bracket. A map key holding ``[`` or ``]`` is refused rather than
encoded: form parsers (Rails, PHP, Stripe) read brackets after decoding, so an encoded
bracket would still split the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote_plus

from compiler.runtime.errors import ToolCallRefused

__all__ = ["bracket_pairs", "form_body", "query_string", "scalar_text"]

_BRACKETS = frozenset("[]")
# One value, items joined: comma (form, explode false), pipe (pipeDelimited) and space
# (spaceDelimited, written %20 as OpenAPI's examples do; a space inside an item is `+`).
_DELIMITERS = {"comma": ",", "pipe": "%7C", "space": "%20"}


def scalar_text(value: Any) -> str:
    """A scalar as query or form text: booleans as ``true``/``false``, null as empty."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def query_string(arguments: list[tuple[str, Any, str | None]]) -> str:
    """The encoded query of ``(name, value, style)`` triples, in order (None: not sent)."""
    parts: list[str] = []
    for name, value, style in arguments:
        if value is None:
            continue
        key = quote_plus(name, safe="")
        if isinstance(value, list | tuple):
            parts += _array_parts(key, value, style)
        elif isinstance(value, Mapping):
            parts += _object_parts(name, key, value, style)
        else:
            parts.append(f"{key}={quote_plus(scalar_text(value), safe='')}")
    return "&".join(parts)


def _array_parts(key: str, values: Any, style: str | None) -> list[str]:
    texts = [quote_plus(_item_text(item), safe="") for item in values if item is not None]
    if not texts:
        return []
    delimiter = _DELIMITERS.get(style or "")
    if delimiter is not None:
        # The separator is capc's; the same character inside a value is encoded (%2C,
        # %7C, +), as every character a model chose that a URL reads as structure.
        return [f"{key}={delimiter.join(texts)}"]
    if style == "brackets":
        return [f"{key}[]={text}" for text in texts]
    return [f"{key}={text}" for text in texts]


def _item_text(item: Any) -> str:
    if isinstance(item, list | tuple | Mapping):
        # The compiler refuses arrays of arrays or objects in the query; a manifest is data.
        raise ToolCallRefused("an array in the query may hold only strings, numbers and "
                              "booleans")
    return scalar_text(item)


def _object_parts(name: str, key: str, value: Mapping[str, Any], style: str | None
                  ) -> list[str]:
    if style == "json":
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return [f"{key}={quote_plus(text, safe='')}"]
    if style != "deep_object":
        raise ToolCallRefused(f"argument {name!r} is an object and has no query style")
    return [f"{pair_key}={pair_value}" for pair_key, pair_value in bracket_pairs(key, value)]


def form_body(fields: Mapping[str, Any]) -> bytes:
    """An ``application/x-www-form-urlencoded`` body, nesting written with brackets:
    ``metadata[plan]=pro``, ``items[0][price]=p_1`` (the Stripe, Rails and PHP form)."""
    parts: list[str] = []
    for name, value in fields.items():
        if value is None:
            continue
        key = quote_plus(name, safe="")
        parts += [f"{pair_key}={pair_value}" for pair_key, pair_value in bracket_pairs(key, value)]
    return "&".join(parts).encode("ascii")


def bracket_pairs(key: str, value: Any) -> list[tuple[str, str]]:
    """Encoded ``(key, value)`` pairs of a value under the already-encoded ``key``:
    objects as ``key[field]``, arrays as ``key[index]``, scalars as text. A null nested
    field is sent empty; an empty array or object sends nothing."""
    pairs: list[tuple[str, str]] = []
    pending: list[tuple[str, Any]] = [(key, value)]
    while pending:
        prefix, node = pending.pop()
        if isinstance(node, Mapping):
            children = [(f"{prefix}[{_bracket_key(field)}]", item)
                        for field, item in node.items()]
        elif isinstance(node, list | tuple):
            children = [(f"{prefix}[{index}]", item) for index, item in enumerate(node)]
        else:
            pairs.append((prefix, quote_plus(scalar_text(node), safe="")))
            continue
        pending += reversed(children)  # a stack: keep document order
    return pairs


def _bracket_key(field: Any) -> str:
    text = str(field)
    if not text:
        # `key[]=` reads as an array push to Rack, PHP, qs and Stripe: never sent.
        raise ToolCallRefused("an empty key cannot be sent in a nested form or query "
                              "encoding (`key[]=` means an array item there); use a name")
    if not _BRACKETS.isdisjoint(text):
        raise ToolCallRefused(f"the key {text[:40]!r} holds a bracket, which nested form and "
                              "query encodings use as structure; use another key")
    return quote_plus(text, safe="")
