"""What the model reads of a response: masked, selected, cut, and every cut announced.

The order is fixed, because a cut must never reveal what masking would have hidden:
decode, mask (a body cut at the byte cap loses any start of a secret at its end), parse
JSON, ``select`` (JMESPath), ``max_items`` (lists cut, a note per cut), serialise, mask
again, ``max_chars`` (through the same mask-then-cut as every other cut).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from compiler.runtime.api.output import (
    CUT_NOTE,
    NOT_JSON_NOTE,
    OutputContract,
    StructuredReply,
)
from compiler.runtime.api.selection import BoundedSelection
from compiler.runtime.egress.charsets import valid_unicode
from compiler.runtime.redaction import CutText, Redactor, masked_cut

# How many cut lists a note names before it only counts the rest.
NOTED_LISTS = 5
REPLACEMENT_CHARACTER = "\ufffd"


class _Body(Protocol):
    @property
    def truncated(self) -> bool: ...

    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ResponseShaping:
    """``options.response`` of an api tool, as the manifest holds it."""

    select: str | None = None
    max_items: int | None = None
    max_chars: int | None = None
    _compiled: BoundedSelection | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any] | None) -> ResponseShaping | None:
        """The shaping of a manifest ``response`` block (None when the tool has none)."""
        if not raw:
            return None
        select = raw.get("select")
        compiled = None if select is None else BoundedSelection(str(select))
        return cls(
            select=None if select is None else str(select),
            max_items=_positive(raw.get("max_items")),
            max_chars=_positive(raw.get("max_chars")),
            _compiled=compiled,
        )


def _positive(value: Any) -> int | None:
    if value is None:
        return None
    number = int(value)
    if number < 1:
        raise ValueError(f"a response limit must be at least 1, got {number}")
    return number


def response_text(redactor: Redactor, response: _Body) -> CutText:
    """The body as masked text; a body cut at the byte cap loses any start of a secret."""
    text = response.text()
    if response.truncated:
        # The byte cut may split a character; its replacement character would hide the
        # start of a secret from the check at the cut.
        text = text.rstrip(REPLACEMENT_CHARACTER)
    return masked_cut(redactor, text, arrived_cut=response.truncated)


def shape_response(redactor: Redactor, body: CutText, shaping: ResponseShaping | None) -> str:
    """The text the model gets from a successful response ``body`` (already masked).

    Valid Unicode whatever the reply held (a JSON ``"\\ud800"`` escape, a pair cut in
    two). Raises SelectionTooLarge when ``select`` multiplies the reply beyond bounds.
    """
    if shaping is None:
        return valid_unicode(body.text)
    notes: list[str] = []
    text = body.text
    if shaping.select is not None or shaping.max_items is not None:
        text, notes = _shape_json(redactor, body, shaping)
    cut = masked_cut(redactor, text, shaping.max_chars)
    if cut.cut and shaping.max_chars is not None and len(cut.text) < cut.original_length:
        notes.append(
            f"[cut: this text is {cut.original_length} characters; the first "
            f"{len(cut.text)} are shown (max_chars {shaping.max_chars}); ask for less "
            "to see the rest]"
        )
    return valid_unicode("\n\n".join([cut.text, *notes]) if notes else cut.text)


def _shape_json(
    redactor: Redactor, body: CutText, shaping: ResponseShaping
) -> tuple[str, list[str]]:
    try:
        value = _parse_json(body.text)
    except ValueError:
        return body.text, ["[the response is not JSON, so it is shown as text]"]
    value, notes = _selected(value, body, shaping)
    # Serialising undoes JSON escapes: the caller masks again (shape_response's masked_cut).
    return _serialised(value), notes


def _selected(value: Any, body: CutText, shaping: ResponseShaping) -> tuple[Any, list[str]]:
    """``value`` after ``select`` and ``max_items``, and the note of what was cut."""
    if shaping._compiled is not None:
        value = shaping._compiled.search(value, len(body.text))
    cuts: list[tuple[str, int]] = []
    if shaping.max_items is not None:
        value = _cut_lists(value, shaping.max_items, "@", cuts)
    return value, [_items_note(cuts, shaping.max_items)] if cuts else []


def _serialised(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(
        value, ensure_ascii=False, separators=(",", ":"))


def shape_structured(redactor: Redactor, body: CutText, shaping: ResponseShaping | None,
                     contract: OutputContract) -> StructuredReply:
    """:func:`shape_response`'s text and, when it matches ``contract``, the structured value.

    The text is exactly shape_response's; a reply that is not JSON or that any cut
    shortened (the byte cap, ``max_chars``) is text only, with a note, because a cut value
    could break the schema. Raises SelectionTooLarge as shape_response does.
    """
    if body.cut:
        return contract.unstructured(shape_response(redactor, body, shaping), CUT_NOTE)
    try:
        value = _parse_json(body.text)
    except ValueError:
        return contract.unstructured(shape_response(redactor, body, shaping), NOT_JSON_NOTE)
    notes: list[str] = []
    text = body.text
    if shaping is not None and (shaping.select is not None or shaping.max_items is not None):
        value, notes = _selected(value, body, shaping)
        text = _serialised(value)
    cut = masked_cut(redactor, text, None if shaping is None else shaping.max_chars)
    if cut.cut:
        # The same text and note as shape_response: one call, no second selection.
        text = shape_response(redactor, CutText(body.text, False, body.original_length),
                              shaping)
        return contract.unstructured(text, CUT_NOTE)
    shown = valid_unicode("\n\n".join([cut.text, *notes]) if notes else cut.text)

    def mask(part: str) -> str:
        return valid_unicode(redactor.redact(part) if redactor else part)

    # Strings need a look only when a secret is known or a JSON escape could have made a
    # lone surrogate: the common reply is walked once, by the validator.
    needs_mask = bool(redactor) or "\\u" in body.text
    return contract.structured(shown, value, len(body.text), mask if needs_mask else None)


def _parse_json(text: str) -> Any:
    """``json.loads``, through orjson when it is installed (``capc[fast]``) and agrees."""
    try:
        import orjson
    except ImportError:
        return json.loads(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        # orjson refuses what json reads (NaN, integers past 64 bits): let json decide.
        return json.loads(text)


def _cut_lists(value: Any, limit: int, path: str, cuts: list[tuple[str, int]]) -> Any:
    """``value`` with every list cut to ``limit`` items; ``cuts`` gets (path, left out)."""
    if isinstance(value, list):
        if len(value) > limit:
            cuts.append((path, len(value) - limit))
        return [_cut_lists(item, limit, f"{path}[{index}]", cuts)
                for index, item in enumerate(value[:limit])]
    if isinstance(value, dict):
        return {key: _cut_lists(item, limit, _child_path(path, key), cuts)
                for key, item in value.items()}
    return value


def _child_path(path: str, key: str) -> str:
    name = key if key.isidentifier() else json.dumps(key)
    return name if path == "@" else f"{path}.{name}"


def _items_note(cuts: list[tuple[str, int]], limit: int | None) -> str:
    named = ", ".join(f"{path} ({left} left out)" for path, left in cuts[:NOTED_LISTS])
    more = len(cuts) - NOTED_LISTS
    if more > 0:
        named += f" and {more} more lists"
    total = sum(left for _, left in cuts)
    return (f"[cut: lists are limited to {limit} items (max_items); {total} items were "
            f"left out: {named}]")
