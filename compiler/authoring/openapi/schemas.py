"""A JSON Schema of the document → one SPEC §10 parameter entry.

What the mapping keeps and how it bends what §10 cannot say:

- ``$ref`` is followed (:mod:`refs`); a schema that is already being expanded on the
  current path is not expanded again (cycles are cut at depth 1): it becomes an empty
  object and the cut is reported.
- ``allOf`` is merged (properties, ``required``); ``oneOf``/``anyOf``, which a §10 entry
  cannot hold, are rewritten to the nearest entry that only lets valid values through
  (``null`` as ``nullable``, scalars of one type with their enums joined, else the first
  alternative) with a note saying what was lost.
- ``readOnly`` properties are left out of inputs; 3.1 type arrays and 3.0 ``nullable``
  become ``nullable``; unknown formats are dropped; patterns Python cannot compile are
  dropped with a note.
- Nesting past :data:`MAX_DEPTH` is cut with a note, and every operation's walk is bounded by
  :data:`MAX_SCHEMA_NODES` (a ``$ref`` bomb fails located instead of fanning out).
- A schema that fans out past that bound through references (Microsoft Graph's entities,
  whose navigation properties refer to other entities, 120 properties each) is walked again
  with references followed at most :data:`REF_DEPTHS` deep, in turn: optional objects met
  deeper, and optional OData navigation properties (``x-ms-navigationProperty``), are left
  out with a note; a required one deeper is offered as an empty object. Only when even one
  level of references does not fit is the operation skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.all_of import combined_keyword, merged_parts
from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.naming import argument_name, is_identifier, wire_name_problem
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.refs import References, Target
from compiler.diagnostics import Code
from compiler.runtime.manifest.parameters import FORMATS, WIRE_NAME
from compiler.runtime.tools.strict import OPENAI_MAX_ENUM_VALUES
from compiler.source.safe_read import MAX_SOURCE_BYTES

OPENAPI_EXPANSION = Code("openapi-expansion", "an operation's schemas expand past the size limit")
CODES = (OPENAPI_EXPANSION,)

# The most enum values a capc parameter entry takes (schemas/capability-v1.json says the
# same; a test holds them together).
MAX_ENUM_VALUES = OPENAI_MAX_ENUM_VALUES

MAX_DEPTH = 8
MAX_SCHEMA_NODES = 5_000
MAX_TOTAL_NODES = 4_000_000
# What the entries of one operation may hold, in characters of text (descriptions, enum
# values, defaults, patterns, names): a file over MAX_SOURCE_BYTES is one capc would not
# read, so an operation past it is refused before it is rendered; and the whole import.
MAX_OPERATION_CHARACTERS = MAX_SOURCE_BYTES
MAX_TOTAL_CHARACTERS = 64 * 1024 * 1024
# A longer pattern is dropped with a note (compiling it would cost what the document wants).
MAX_PATTERN_LENGTH = 1000
# How deep references are followed when a schema fans out past MAX_SCHEMA_NODES: each
# tried in turn (every try bounded by MAX_SCHEMA_NODES again).
REF_DEPTHS = (3, 2, 1)
BINARY_MARK = "__binary__"
_CUT_MARK = "__cut__"
_NAVIGATION = "x-ms-navigationProperty"
SCALARS = ("string", "integer", "number", "boolean")
_TYPES = (*SCALARS, "array", "object")


class Unexpressible(Exception):
    """The operation needs something §10 cannot say; it is skipped with this reason."""


@dataclass(slots=True)
class Budget:
    """Schema nodes walked and the characters their entries hold: per operation and for
    the whole import. A node costs what it renders, not only one count: 5,000 nodes that
    each repeat a 30 KB enum are 150 MB of output from a 44 KB document."""

    total: int = 0
    operation: int = 0
    total_characters: int = 0
    operation_characters: int = 0

    def start_operation(self) -> None:
        """Reset the per-operation bounds."""
        self.operation = self.operation_characters = 0

    def spend_characters(self, target: Target, count: int) -> None:
        """Count ``count`` characters of entries; refuse (located) past either bound."""
        self.total_characters += count
        self.operation_characters += count
        over = (MAX_OPERATION_CHARACTERS if self.operation_characters > MAX_OPERATION_CHARACTERS
                else MAX_TOTAL_CHARACTERS if self.total_characters > MAX_TOTAL_CHARACTERS
                else None)
        if over is not None:
            raise ImportRefused((target.file.error(
                target.path, OPENAPI_EXPANSION,
                f"the schemas here expand past {over} characters of arguments (references "
                "fanning out?): refused so the import stays bounded"),))

    def spend(self, refs: References, target: Target) -> None:
        """Count one node; refuse (located) once either bound is passed."""
        self.total += 1
        self.operation += 1
        if self.operation > MAX_SCHEMA_NODES or self.total > MAX_TOTAL_NODES:
            limit = MAX_SCHEMA_NODES if self.operation > MAX_SCHEMA_NODES else MAX_TOTAL_NODES
            raise ImportRefused((target.file.error(
                target.path, OPENAPI_EXPANSION,
                f"the schemas here expand past {limit} nodes (references fanning out?): "
                "refused so the import stays bounded"),))


@dataclass(slots=True)
class _Merged:
    keywords: dict[str, Any]
    properties: dict[str, Target]
    required: set[str]


@dataclass(slots=True)
class SchemaWalk:
    """Converting the schemas of one operation; ``notes`` say what could not be kept."""

    refs: References
    budget: Budget
    notes: list[str] = field(default_factory=list)
    stack: list[tuple[str, tuple[str | int, ...]]] = field(default_factory=list)
    # While a fanning-out schema is walked again: how deep references are followed, and
    # how many are followed on the current path.
    ref_limit: int | None = None
    ref_hops: int = 0
    navigation_left_out: int = 0

    def entry(self, target: Target, label: str, depth: int = 0) -> dict[str, Any] | None:
        """The §10 entry of the schema at ``target`` (None: leave it out of inputs)."""
        if depth or self.stack or self.ref_limit is not None:
            return self._entry(target, label, depth)
        notes = len(self.notes)
        nodes, characters = self.budget.operation, self.budget.operation_characters
        for limit in (None, *REF_DEPTHS):
            self.ref_limit, self.ref_hops, self.navigation_left_out = limit, 0, 0
            try:
                entry = self._entry(target, label, depth)
            except ImportRefused as refused:
                if not self._may_retry(refused, limit):
                    raise
                del self.notes[notes:]  # the next try says what it cut
                self.budget.operation, self.budget.operation_characters = nodes, characters
                continue
            finally:
                self.ref_limit = None
            if entry is not None:
                entry.pop(_CUT_MARK, None)
            if limit is not None:
                left = (f", {self.navigation_left_out} optional navigation properties "
                        "left out" if self.navigation_left_out else "")
                self.notes.insert(notes, f"{label}: the schemas fan out past "
                                  f"{MAX_SCHEMA_NODES} nodes; references followed "
                                  f"{limit} deep{left}")
            return entry
        raise AssertionError("unreachable: the last try raises")  # pragma: no cover

    def _may_retry(self, refused: ImportRefused, limit: int | None) -> bool:
        """Whether a refusal is this operation's fan-out (not the whole import's bound),
        and a shallower try is left."""
        return (refused.diagnostics[0].code == "openapi-expansion"
                and limit != REF_DEPTHS[-1]
                and self.budget.total <= MAX_TOTAL_NODES
                and self.budget.total_characters <= MAX_TOTAL_CHARACTERS)

    def _entry(self, target: Target, label: str, depth: int) -> dict[str, Any] | None:
        self.budget.spend(self.refs, target)
        written = target.value
        target = self.refs.follow(target)
        if not isinstance(target.value, Mapping):
            return {"type": "string"}
        # Keywords beside a $ref (3.1 reads them; 3.0 documents write them meaning the same).
        beside = written if isinstance(written, Mapping) and "$ref" in written else {}
        if target.value.get("readOnly") is True or beside.get("readOnly") is True:
            return None
        if target.key in self.stack:
            self.notes.append(f"{label}: recursive schema {target.pointer} cut at depth 1")
            return {"type": "object", "description": "(recursive schema, not expanded)"}
        if depth > MAX_DEPTH:
            self.notes.append(f"{label}: nesting deeper than {MAX_DEPTH} cut")
            return {"type": "object", "description": "(nested too deep, not expanded)"}
        hop = bool(beside)
        if hop and self.ref_limit is not None and self.ref_hops >= self.ref_limit \
                and _object_like(target.value):
            self.notes.append(f"{label}: {target.pointer} not expanded (references "
                              f"followed {self.ref_limit} deep)")
            return {"type": "object", "description": "(not expanded)", _CUT_MARK: True}
        self.ref_hops += hop
        self.stack.append(target.key)
        try:
            merged = self._merge(target, label)
            if merged.keywords.get("readOnly") is True:  # said by one allOf part
                return None
            if isinstance(beside.get("description"), str):
                merged.keywords["description"] = beside["description"]
            converted = self._convert(merged, label, depth)
            self.budget.spend_characters(target, _own_size(converted))
            return converted
        finally:
            self.stack.pop()
            self.ref_hops -= hop

    # -- allOf / oneOf / anyOf ------------------------------------------------------------

    def _merge(self, target: Target, label: str) -> _Merged:
        schema = target.value
        merged = _Merged({k: v for k, v in schema.items()
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
        self._take_properties(merged, target)
        for index, _ in enumerate(_list(schema.get("allOf"))):
            part = self._part(Target(target.file, (*target.path, "allOf", index),
                                     schema["allOf"][index]))
            if part is None:
                continue
            if part.key in self.stack:
                self.notes.append(f"{label}: allOf refers back to {part.pointer}; cut")
                continue
            self.stack.append(part.key)
            try:
                inner = self._merge(part, label)
            finally:
                self.stack.pop()
            for key, value in inner.keywords.items():
                self._combine(merged, key, value, label)
            for name, sub in inner.properties.items():
                self._add_property(merged, name, sub, label)
            merged.required |= inner.required
        for word in ("oneOf", "anyOf"):
            if merged.keywords.get(word):
                self._choose(merged, merged.keywords[word], word, label)
        return merged

    def _part(self, part: Target) -> Target | None:
        self.budget.spend(self.refs, part)
        part = self.refs.follow(part)
        return part if isinstance(part.value, Mapping) else None

    def _combine(self, merged: _Merged, key: str, value: Any, label: str) -> None:
        """One allOf part's keyword into ``merged`` (:func:`combined_keyword`)."""
        if key not in merged.keywords:
            merged.keywords[key] = value
            return
        merged.keywords[key], note = combined_keyword(key, merged.keywords[key], value)
        if note:
            self.notes.append(f"{label}: {note}")

    def _add_property(self, merged: _Merged, name: str, sub: Target, label: str) -> None:
        """A property of one allOf part: one that several parts define must satisfy them
        all, so its schemas are merged as an allOf of their own."""
        known = merged.properties.get(name)
        if known is None:
            merged.properties[name] = sub
        elif known.file is sub.file:
            combined = {"allOf": [*merged_parts(known.value), sub.value]}
            merged.properties[name] = Target(known.file, known.path, combined)
        else:
            self.notes.append(f"{label}.{name}: defined by allOf parts in two files; the "
                              "first part's schema is kept")

    def _take_properties(self, merged: _Merged, target: Target) -> None:
        properties = target.value.get("properties")
        if isinstance(properties, Mapping):
            for name, value in properties.items():
                merged.properties.setdefault(
                    name, Target(target.file, (*target.path, "properties", name), value))
        merged.required |= {r for r in _list(target.value.get("required")) if isinstance(r, str)}

    def _choose(self, merged: _Merged, written: list[Target], word: str, label: str) -> None:
        """Fold ``oneOf``/``anyOf`` into ``merged``: §10 holds one schema per argument."""
        del merged.keywords[word]
        alternatives: list[_Merged] = []
        dropped_empty = False
        for written_part in written:
            part = self._part(written_part)
            if part is None or part.key in self.stack:
                continue
            self.stack.append(part.key)
            try:
                alternative = self._merge(part, label)
            finally:
                self.stack.pop()
            kind = alternative.keywords.get("type")
            if kind == "null" or _null_only(alternative):
                merged.keywords["nullable"] = True
                continue
            if alternative.keywords.get("enum") == [""] and len(alternative.properties) == 0:
                dropped_empty = True  # "" as "unset this field": Stripe's idiom
                continue
            alternatives.append(alternative)
        if not alternatives:
            return
        kinds = {_kind_of(alternative) for alternative in alternatives}
        if len(alternatives) == 1:
            chosen = alternatives[0]
        elif kinds == {"object"}:
            # A union of objects (often discriminated by a `type` field) has no §10 form.
            # Merging them would let the model send a mix that matches no alternative, so
            # the first is kept: every request stays valid, and the note says what is gone.
            chosen = alternatives[0]
            self.notes.append(f"{label}: {word} of {len(alternatives)} object schemas kept "
                              f"as the first; {len(alternatives) - 1} other shapes the API "
                              "accepts are not offered (a ToolOverride can choose another)")
        elif len(kinds) == 1:
            chosen = alternatives[0]
            enums = [alternative.keywords.get("enum") for alternative in alternatives]
            if all(isinstance(values, list) for values in enums):
                chosen.keywords["enum"] = [v for values in enums for v in values or ()]
            else:
                chosen.keywords.pop("enum", None)
        else:
            chosen = alternatives[0]
            self.notes.append(f"{label}: {word} of {', '.join(sorted(map(str, kinds)))} "
                              f"kept as its first alternative ({_kind_of(chosen)})")
        if dropped_empty:
            self.notes.append(f"{label}: the empty-string alternative of {word} left out")
        for key, value in chosen.keywords.items():
            merged.keywords.setdefault(key, value)
        for name, sub in chosen.properties.items():
            merged.properties.setdefault(name, sub)
        merged.required |= chosen.required

    # -- one entry ------------------------------------------------------------------------

    def _convert(self, merged: _Merged, label: str, depth: int) -> dict[str, Any]:
        keywords = merged.keywords
        kind, nullable = self._type(merged, label)
        entry: dict[str, Any] = {"type": kind}
        description = keywords.get("description") or keywords.get("title")
        if isinstance(description, str) and description.strip():
            entry["description"] = clean_text(description, 500)
        if nullable:
            entry["nullable"] = True
        if kind in SCALARS:
            self._scalar(entry, keywords, kind, label)
        elif kind == "array":
            items = keywords.get("items")
            if isinstance(items, Target):
                converted = self.entry(items, f"{label}[]", depth + 1)
                if converted is not None and converted.pop(_CUT_MARK, False):
                    entry[_CUT_MARK] = True  # an optional list of cut objects: left out
                entry["items"] = converted or {"type": "string"}
            else:
                entry["items"] = {"type": "string"}
            _copy_int(entry, keywords, ("minItems", "min_items"), ("maxItems", "max_items"))
        else:
            self._object(entry, merged, label, depth)
        return entry

    def _type(self, merged: _Merged, label: str) -> tuple[str, bool]:
        written = merged.keywords.get("type")
        nullable = merged.keywords.get("nullable") is True
        types = [t for t in (written if isinstance(written, list) else [written])
                 if isinstance(t, str)]
        if "null" in types:
            nullable = True
        known = [t for t in types if t in _TYPES]
        if len(known) > 1:
            self.notes.append(f"{label}: type {known} kept as {known[0]}")
        if known:
            return known[0], nullable
        if merged.properties or "additionalProperties" in merged.keywords:
            return "object", nullable
        if "items" in merged.keywords:
            return "array", nullable
        values = _list(merged.keywords.get("enum"))
        if values and all(isinstance(v, bool) for v in values):
            return "boolean", nullable
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return "integer", nullable
        return "string", nullable

    def _scalar(self, entry: dict[str, Any], keywords: Mapping[str, Any], kind: str,
                label: str) -> None:
        values = _list(keywords.get("enum"))
        if "const" in keywords:
            values = [keywords["const"]]
        kept = list(dict.fromkeys(v for v in values if _fits(v, kind)))
        if len(kept) > MAX_ENUM_VALUES:
            # capc (and OpenAI's strict mode) take at most this many: a plain field the
            # upstream validates is the nearest schema that compiles.
            self.notes.append(f"{label}: enum of {len(kept)} values left out (capc takes at "
                              f"most {MAX_ENUM_VALUES}); any {kind} is accepted")
            kept = []
        if kept:
            entry["enum"] = kept
        default = keywords.get("default")
        if default is not None and _fits(default, kind) and (not kept or default in kept):
            entry["default"] = default
        written = keywords.get("format")
        if written == "binary" and kind == "string":
            entry[BINARY_MARK] = True  # a file in multipart; the mapping removes the mark
        elif isinstance(written, str) and written in FORMATS.get(kind, ()):
            entry["format"] = written
        if kind == "string":
            _copy_int(entry, keywords, ("minLength", "min_length"), ("maxLength", "max_length"))
            pattern = keywords.get("pattern")
            if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_LENGTH:
                self.notes.append(f"{label}: a pattern of {len(pattern)} characters (over "
                                  f"{MAX_PATTERN_LENGTH}); left out")
            elif isinstance(pattern, str):
                pattern = self._plain_pattern(pattern, label)
            if isinstance(pattern, str):
                if _runs(pattern):
                    entry["pattern"] = pattern
                else:
                    self.notes.append(f"{label}: pattern {pattern[:60]!r} is not one the "
                                      "linear-time argument validation runs; left out")
        else:
            for word, name in (("minimum", "minimum"), ("maximum", "maximum")):
                bound = keywords.get(word)
                if _fits(bound, "number"):
                    entry[name] = bound

    def _plain_pattern(self, pattern: str, label: str) -> str | None:
        """A JavaScript literal ``/regex/`` as the plain regex; with flags, dropped (a
        note says so): copied as is, its slashes would be matched as characters."""
        literal = _JS_REGEX.match(pattern)
        if literal is None:
            return pattern
        if literal.group(2):
            self.notes.append(f"{label}: JavaScript pattern with flags "
                              f"{literal.group(2)!r} left out")
            return None
        return literal.group(1)

    def _object(self, entry: dict[str, Any], merged: _Merged, label: str, depth: int) -> None:
        properties: dict[str, Any] = {}
        for name, sub in merged.properties.items():
            if self._left_out(name, sub, merged.required):
                continue
            converted = self.entry(sub, f"{label}.{name}", depth + 1)
            if converted is None:
                continue
            if converted.pop(_CUT_MARK, False) and name not in merged.required:
                continue  # an optional object past the reference depth (noted)
            shown = name
            if not is_identifier(name):
                # ``@odata.type``, ``user.name``: an argument name, the exact one on the wire.
                shown, problem = argument_name(name), wire_name_problem(name)
                if problem is None and (shown in merged.properties or shown in properties):
                    problem = f"would be named {shown!r}, as another field is"
                if problem is not None:
                    if name in merged.required:
                        raise Unexpressible(f"{label}: required field {name!r} {problem}")
                    self.notes.append(f"{label}: optional field {name!r} left out: it "
                                      f"{problem}")
                    continue
                converted = {**converted, WIRE_NAME: name}
            if name in merged.required:
                converted = {**converted, "required": True}
            properties[shown] = converted
        extra = merged.keywords.get("additionalProperties")
        for name in sorted(merged.required - set(merged.properties)):
            # Required, yet given no schema (a slip in the document): any value is valid.
            if extra is not False and is_identifier(name):
                properties[name] = {"type": "string", "required": True}
                self.notes.append(f"{label}: {name!r} is required but has no schema; "
                                  "offered as a string")
        if properties:
            entry["properties"] = properties
        if isinstance(extra, Target) and extra.value:
            converted = self.entry(extra, f"{label}{{}}", depth + 1)
            if converted is not None:
                converted.pop(_CUT_MARK, None)
                entry["additional_properties"] = converted
        elif not properties and extra is not False:
            entry["additional_properties"] = {"type": "string"}
            self.notes.append(f"{label}: a free-form object; its values are taken as strings")


    def _left_out(self, name: str, sub: Target, required: set[str]) -> bool:
        """An optional OData navigation property while references are followed only so
        deep: a relationship (set through ``@odata.bind``), not a field of the entity."""
        if self.ref_limit is None or name in required:
            return False
        if isinstance(sub.value, Mapping) and sub.value.get(_NAVIGATION) is True:
            self.navigation_left_out += 1
            return True
        return False


def _null_only(alternative: _Merged) -> bool:
    """``{type: object, nullable: true}`` and nothing else: how OpenAPI 3.0 conversions
    write the ``null`` alternative of an ``anyOf`` (Microsoft Graph's 3,500 times; 10,000
    times in 25 documents of the APIs.guru directory)."""
    return (alternative.keywords.get("nullable") is True and not alternative.properties
            and alternative.keywords.get("type", "object") == "object"
            and set(alternative.keywords) <= {"type", "nullable", "description", "title"})


def _object_like(schema: Mapping[str, Any]) -> bool:
    """Whether a schema describes an object (what a reference fan-out is made of)."""
    return (schema.get("type") == "object" or "properties" in schema or "allOf" in schema)


_CHILDREN = ("items", "properties", "additional_properties")
_JS_REGEX = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)


def _own_size(entry: Mapping[str, Any]) -> int:
    """About how many characters ``entry`` renders to, its children apart (they are
    counted when they are converted)."""
    size = 16
    for key, value in entry.items():
        if key == "properties":
            size += sum(len(name) + 8 for name in value)
        elif key not in _CHILDREN:
            size += len(key) + (sum(len(str(item)) + 4 for item in value)
                                if isinstance(value, list) else len(str(value)))
    return size


def _runs(pattern: str) -> bool:
    """Whether the argument validation's regex engine (and Python's) accept ``pattern``."""
    from compiler.runtime.tools.argument_schemas import pattern_compiles

    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return pattern_compiles(pattern)


def _kind_of(merged: _Merged) -> str:
    written = merged.keywords.get("type")
    if isinstance(written, str):
        return written
    if merged.properties:
        return "object"
    return "array" if "items" in merged.keywords else "string"


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return False


def _copy_int(entry: dict[str, Any], keywords: Mapping[str, Any],
              *pairs: tuple[str, str]) -> None:
    for word, name in pairs:
        value = keywords.get(word)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            entry[name] = value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

