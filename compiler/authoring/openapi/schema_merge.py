"""One schema with its ``allOf`` parts merged and its ``oneOf``/``anyOf`` folded into the
single shape a SPEC §10 entry holds (the schema walk's first step, :mod:`schemas`).

- ``allOf`` parts are merged: keywords by :func:`all_of.combined_keyword`, properties that
  several parts define as an ``allOf`` of their own, ``required`` joined. A part that
  refers back to a schema being expanded is cut with a note.
- ``oneOf``/``anyOf``: a ``null`` alternative (or OpenAPI 3.0's ``{type: object, nullable:
  true}``) makes the entry ``nullable``; Stripe's ``""`` "unset" alternative is left out;
  alternatives of one scalar type have their enums joined; a union of objects, or of
  several kinds, keeps its first alternative, with a note on how many shapes are not
  offered (merging would let the model send a mix no alternative accepts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compiler.authoring.openapi.all_of import combined_keyword, merged_parts
from compiler.authoring.openapi.problems import pointer_of
from compiler.authoring.openapi.refs import Target

if TYPE_CHECKING:
    from compiler.authoring.openapi.schemas import SchemaWalk


@dataclass(slots=True)
class Merged:
    """A schema's keywords (sub-schemas as targets), its properties and what it requires."""

    keywords: dict[str, Any]
    properties: dict[str, Target]
    required: set[str]


def merge(walk: SchemaWalk, target: Target, label: str) -> Merged:
    """``target``'s schema (followed) with its allOf merged and oneOf/anyOf folded."""
    schema = target.value
    merged = Merged({k: v for k, v in schema.items()
                     if k not in ("allOf", "properties", "required")}, {}, set())
    # Sub-schemas stay targets: they are followed (and located) in their own file.
    for word in ("items", "additionalProperties"):
        if isinstance(schema.get(word), Mapping):
            merged.keywords[word] = Target(target.file, (*target.path, word), schema[word])
    for word in ("oneOf", "anyOf"):
        if word in schema:
            merged.keywords[word] = [
                Target(target.file, (*target.path, word, index), value)
                for index, value in enumerate(_list(schema[word]))]
    _take_properties(merged, target)
    for index, _ in enumerate(_list(schema.get("allOf"))):
        part = _part(walk, Target(target.file, (*target.path, "allOf", index),
                                  schema["allOf"][index]))
        if part is None:
            continue
        if part.key in walk.stack:
            walk.notes.append(f"{label}: allOf refers back to {part.pointer}; cut")
            continue
        walk.stack.append(part.key)
        try:
            inner = merge(walk, part, label)
        finally:
            walk.stack.pop()
        for key, value in inner.keywords.items():
            _combine(walk, merged, key, value, label)
        for name, sub in inner.properties.items():
            _add_property(walk, merged, name, sub, label)
        merged.required |= inner.required
    for word in ("oneOf", "anyOf"):
        if merged.keywords.get(word):
            where = f"{word} at {pointer_of((*target.path, word))[:160]}" + (
                f" in {target.file.shown[:80]}" if target.file is not walk.refs.root else "")
            _choose(walk, merged, merged.keywords[word], where, label)
    return merged


def _part(walk: SchemaWalk, part: Target) -> Target | None:
    walk.budget.spend(walk.refs, part)
    part = walk.refs.follow(part)
    return part if isinstance(part.value, Mapping) else None


def _combine(walk: SchemaWalk, merged: Merged, key: str, value: Any, label: str) -> None:
    """One allOf part's keyword into ``merged`` (:func:`combined_keyword`)."""
    if key not in merged.keywords:
        merged.keywords[key] = value
        return
    merged.keywords[key], note = combined_keyword(key, merged.keywords[key], value)
    if note:
        walk.notes.append(f"{label}: {note}")


def _add_property(walk: SchemaWalk, merged: Merged, name: str, sub: Target,
                  label: str) -> None:
    """A property of one allOf part: one that several parts define must satisfy them
    all, so its schemas are merged as an allOf of their own."""
    known = merged.properties.get(name)
    if known is None:
        merged.properties[name] = sub
    elif known.file is sub.file:
        combined = {"allOf": [*merged_parts(known.value), sub.value]}
        merged.properties[name] = Target(known.file, known.path, combined)
    else:
        walk.notes.append(f"{label}.{name}: defined by allOf parts in two files; the "
                          "first part's schema is kept")


def _take_properties(merged: Merged, target: Target) -> None:
    properties = target.value.get("properties")
    if isinstance(properties, Mapping):
        for name, value in properties.items():
            merged.properties.setdefault(
                name, Target(target.file, (*target.path, "properties", name), value))
    merged.required |= {r for r in _list(target.value.get("required")) if isinstance(r, str)}


def _alternatives(walk: SchemaWalk, merged: Merged, written: list[Target],
                  label: str) -> tuple[list[Merged], bool]:
    """The alternatives that are values (null ones make ``merged`` nullable), and whether
    Stripe's empty-string "unset" alternative was left out."""
    alternatives: list[Merged] = []
    dropped_empty = False
    for written_part in written:
        part = _part(walk, written_part)
        if part is None or part.key in walk.stack:
            continue
        walk.stack.append(part.key)
        try:
            alternative = merge(walk, part, label)
        finally:
            walk.stack.pop()
        kind = alternative.keywords.get("type")
        if kind == "null" or _null_only(alternative):
            merged.keywords["nullable"] = True
            continue
        if alternative.keywords.get("enum") == [""] and len(alternative.properties) == 0:
            dropped_empty = True  # "" as "unset this field": Stripe's idiom
            continue
        alternatives.append(alternative)
    return alternatives, dropped_empty


def _choose(walk: SchemaWalk, merged: Merged, written: list[Target], where: str,
            label: str) -> None:
    """Fold ``oneOf``/``anyOf`` into ``merged``: §10 holds one schema per argument.
    ``where``: the keyword and its location (``oneOf at #/components/schemas/X``)."""
    word = where.split(" ", 1)[0]
    del merged.keywords[word]
    alternatives, dropped_empty = _alternatives(walk, merged, written, label)
    if not alternatives:
        return
    kinds = {kind_of(alternative) for alternative in alternatives}
    chosen = alternatives[0]
    if len(alternatives) == 1:
        pass
    elif kinds == {"object"}:
        # A union of objects (often discriminated by a `type` field) has no §10 form.
        # Merging them would let the model send a mix that matches no alternative, so
        # the first is kept: every request stays valid, and the note says what is gone.
        walk.notes.append(f"{label}: {where} of {len(alternatives)} object schemas kept "
                          f"as the first; {len(alternatives) - 1} other shapes the API "
                          "accepts are not offered (SPEC §10 holds one schema per "
                          "argument; a ToolOverride can choose another)")
    elif len(kinds) == 1:
        enums = [alternative.keywords.get("enum") for alternative in alternatives]
        if all(isinstance(values, list) for values in enums):
            chosen.keywords["enum"] = [v for values in enums for v in values or ()]
        else:
            chosen.keywords.pop("enum", None)
    else:
        walk.notes.append(f"{label}: {where} of {', '.join(sorted(map(str, kinds)))} "
                          f"kept as its first alternative ({kind_of(chosen)})")
    if dropped_empty:
        walk.notes.append(f"{label}: the empty-string alternative of {word} left out")
    for key, value in chosen.keywords.items():
        merged.keywords.setdefault(key, value)
    for name, sub in chosen.properties.items():
        merged.properties.setdefault(name, sub)
    merged.required |= chosen.required


def _null_only(alternative: Merged) -> bool:
    """``{type: object, nullable: true}`` and nothing else: how OpenAPI 3.0 conversions
    write the ``null`` alternative of an ``anyOf`` (Microsoft Graph's 3,500 times; 10,000
    times in 25 documents of the APIs.guru directory)."""
    return (alternative.keywords.get("nullable") is True and not alternative.properties
            and alternative.keywords.get("type", "object") == "object"
            and set(alternative.keywords) <= {"type", "nullable", "description", "title"})


def kind_of(merged: Merged) -> str:
    """The type a merged schema describes (written, else what its keywords imply)."""
    written = merged.keywords.get("type")
    if isinstance(written, str):
        return written
    if merged.properties:
        return "object"
    return "array" if "items" in merged.keywords else "string"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
