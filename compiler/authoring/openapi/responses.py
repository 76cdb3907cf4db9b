"""An operation's 2xx JSON response → ``options.output_schema`` (SPEC §11, §16).

The schema is written in JSON Schema's own spelling, within the subset capc validates
replies against (``compiler.runtime.api.output_validation``), and it must admit every reply
the document allows: whatever is not kept is dropped (which only loosens the schema), and
said in a comment, never guessed.

- ``$ref`` is followed as for inputs (:mod:`refs`); a schema already being expanded on the
  current path (a recursive one) accepts any value there, with a note.
- ``allOf`` parts are merged (a reply satisfies every part, so the merge keeps what each
  says, tightest bounds first: :func:`compiler.authoring.openapi.all_of.combined_keyword`);
  ``oneOf``/``anyOf`` become ``anyOf`` of every alternative (a discriminator is not needed:
  each alternative is checked as written).
- 3.0 ``nullable`` and 3.1 ``type`` arrays become type lists with ``null``;
  ``exclusiveMinimum: true`` (3.0) becomes 2020-12's number form; ``writeOnly`` properties
  are never in a reply and are left out.
- A ``pattern`` that could backtrack, and keywords outside the subset (``not``,
  ``patternProperties``, ``if``...), are dropped with a note; descriptions, formats and
  examples are not copied (the schema checks replies; the description is the tool's).
- Several 2xx JSON responses give the ``anyOf`` of their schemas. Nesting past
  :data:`MAX_DEPTH` accepts any value there. A schema that expands past :data:`MAX_NODES`
  nodes (Stripe's expandable fields reach the same objects again and again) is derived
  again with a shallower nesting limit (:data:`FALLBACK_DEPTHS`), deeper levels accepting
  any value, with a note; only when even the shallowest is too large is it dropped.
- An operation left without a schema says why (:data:`TEXT_REASONS`): it has no 2xx
  response, its 2xx responses have no body (204) or none in JSON, or its schema allows
  any value or is too large.
- Operations replying with the same schema (Stripe's and GitHub's share their objects)
  share its derivation: it depends on the schema alone, so it is worked out once per
  import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.all_of import combined_keyword
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.response_memo import Location, Note, Tracker, spelled_notes
from compiler.authoring.openapi.response_size import fits
from compiler.runtime.api.output_validation import (
    JSON_TYPES,
    UNSUPPORTED_KEYWORDS,
    pattern_problem,
)

MAX_DEPTH = 10
# Shallower nesting limits tried, in order, when a schema expands past MAX_NODES: each
# attempt stops at MAX_NODES, so an operation costs at most len(...) + 1 times that.
FALLBACK_DEPTHS = (6, 4, 3, 2, 1)
# A schema's budget: every tools/list a server answers carries it, and a reviewer reads
# it in the file. 2,000 nodes (64 KiB of JSON) keep GitHub's replies whole (11 of its
# 579 distinct reply schemas nest shallower) and Stripe's expandable objects 3 to 10
# levels deep, where 4,000 made Stripe's files 47 MB (27 MB now).
MAX_NODES = 2_000
MAX_CHARACTERS = 64 * 1024
_JSON_MEDIA = re.compile(r"^application/([\w.+-]+\+)?json\s*(;.*)?$", re.IGNORECASE)
_COPIED = ("minimum", "maximum", "multipleOf", "minLength", "maxLength", "minItems",
           "maxItems", "uniqueItems", "minProperties", "maxProperties")
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                     "maxProperties"})
_UNSUPPORTED = UNSUPPORTED_KEYWORDS - {"$ref"}

Schema = Any

# Why an operation's replies are text only (DerivedOutput.reason), one short class each.
NO_SUCCESS = "no 2xx response"
NO_BODY = "2xx without a body (204, redirect-like)"
NOT_JSON = "2xx body not JSON"
ANY_VALUE = "schema allows any value"
TOO_LARGE = "schema too large"
TEXT_REASONS = (NO_SUCCESS, NO_BODY, NOT_JSON, ANY_VALUE, TOO_LARGE)




class _TooLarge(Exception):
    """The converted schema passed :data:`MAX_NODES` nodes."""


@dataclass(frozen=True, slots=True)
class DerivedOutput:
    """The output schema of one operation (None: it returns text), what was not kept, and
    (without a schema) why, as one of :data:`TEXT_REASONS`."""

    schema: Schema
    notes: tuple[str, ...] = ()
    reason: str = ""


def derived_output_schema(refs: References, operation: Target) -> DerivedOutput:
    """The output schema of the operation at ``operation`` from its 2xx JSON responses."""
    responses = operation.value.get("responses")
    if not isinstance(responses, Mapping):
        return DerivedOutput(None, reason=NO_SUCCESS)
    found: list[Target] = []
    successes = bodies = 0
    for status in sorted(str(key) for key in responses):
        if not (status.startswith("2") and len(status) == 3):
            continue
        successes += 1
        response = refs.follow(Target(operation.file, (*operation.path, "responses", status),
                                      responses.get(status, responses.get(_int(status)))))
        content = response.value.get("content") if isinstance(response.value, Mapping) else None
        if not isinstance(content, Mapping) or not content:
            continue
        bodies += 1
        media = next((name for name in sorted(content) if _JSON_MEDIA.match(str(name))), None)
        body = content.get(media) if media is not None else None
        if isinstance(body, Mapping) and "schema" in body:
            found.append(Target(response.file, (*response.path, "content", str(media),
                                                "schema"), body["schema"]))
    if not found:
        return DerivedOutput(None, reason=(NO_SUCCESS if not successes else
                                           NO_BODY if not bodies else NOT_JSON))
    derived: dict[tuple[Any, ...], DerivedOutput] = refs.derived_outputs
    key = tuple(refs.follow(target).key for target in found)
    if key not in derived:
        derived[key] = _derived(refs, found)
    return derived[key]


def _derived(refs: References, found: list[Target]) -> DerivedOutput:
    """The output schema of the reply schemas ``found``, nested as deep as fits."""
    for depth in (MAX_DEPTH, *FALLBACK_DEPTHS):
        derived = _derived_within(refs, found, depth)
        if derived is not None:
            return derived
    return DerivedOutput(None, (f"output: the response schema expands past {MAX_NODES} "
                                "nodes even one level deep; no output_schema (replies are "
                                "text)",), TOO_LARGE)


def _derived_within(refs: References, found: list[Target], depth: int) -> DerivedOutput | None:
    """The schema of ``found`` with nesting past ``depth`` accepting any value; None when
    it is still too large."""
    walk = _OutputWalk(refs, max_depth=depth)
    try:
        parts = [walk.convert(target, "output", 0) for target in found]
    except _TooLarge:
        return None
    schema = parts[0] if len(parts) == 1 else {"anyOf": parts}
    notes = list(dict.fromkeys(spelled_notes(walk.notes)))
    if depth < MAX_DEPTH:
        notes.insert(0, f"output: the response schema expands past {MAX_NODES} nodes; "
                        f"nested deeper than {depth} levels accepts any value")
    if schema is True or schema == {}:
        return DerivedOutput(None, (*notes, "output: the response schema allows any value; "
                                    "no output_schema"), ANY_VALUE)
    if not fits(schema, MAX_CHARACTERS, refs.measured_parts):
        return None
    return DerivedOutput(schema, tuple(notes))


def _int(status: str) -> int | None:
    return int(status) if status.isdigit() else None


@dataclass(slots=True)
class _OutputWalk:
    refs: References
    notes: list[Note] = field(default_factory=list)  # a reused part's as one (response_memo)
    stack: list[Location] = field(default_factory=list)
    nodes: int = 0
    max_depth: int = MAX_DEPTH
    seen: Tracker = field(default_factory=Tracker)  # for reusing parts (response_memo)

    def convert(self, target: Target, label: str, depth: int) -> Schema:
        """The JSON Schema of the document's schema at ``target``."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge
        target = self.refs.follow(target)
        if isinstance(target.value, bool):
            return target.value
        if not isinstance(target.value, Mapping):
            return {}
        key, seen = target.key, self.seen
        seen.checked.append(key)
        if key in self.stack:
            seen.lowest_hit = min(seen.lowest_hit, self.stack.index(key))
            self.notes.append(f"{label}: recursive schema {target.pointer}: any value "
                              "accepted there")
            return {}
        if depth > seen.reach:
            seen.reach = depth
        if depth > self.max_depth:
            seen.cut = True
            if self.max_depth == MAX_DEPTH:  # a shallower limit is noted once, by the caller
                self.notes.append(f"{label}: nested deeper than {MAX_DEPTH}: any value "
                                  "accepted")
            return {}
        return self._reused(target, label, depth)

    def _reused(self, target: Target, label: str, depth: int) -> Schema:
        """The part at ``target`` as converted before under another path, when that
        conversion holds here (response_memo), else converted and kept.

        Proven equal by
        tests/authoring/openapi/test_openapi_output_schemas.py::test_reused_parts_convert_as_anew
        """
        parts = self.refs.converted_parts
        place = (target.key, self.max_depth - depth, self.max_depth == MAX_DEPTH)
        start = self.nodes - 1
        known = parts.found(place, self.stack)
        if known is not None and (known.complete or start + known.nodes > MAX_NODES):
            self.nodes = start + known.nodes
            self.seen.reused(known, depth)
            if self.nodes > MAX_NODES:
                raise _TooLarge
            if known.suffixes:
                self.notes.append((label, known.suffixes))
            return known.schema
        noted, saved = len(self.notes), self.seen.begin(len(self.stack), depth)
        schema: Schema = None
        try:
            schema = self._expanded(target, label, depth)
        finally:  # kept when it met nothing above it; out of nodes, as a lower bound
            entry = self.seen.finished(saved, len(self.stack), depth, schema,
                                       self.notes[noted:], label, self.nodes - start)
            if entry is not None and (schema is not None or self.nodes > MAX_NODES):
                parts.keep(place, entry)
        return schema

    def _expanded(self, target: Target, label: str, depth: int) -> Schema:
        """The schema object at ``target`` (not recursive, within the nesting limit)."""
        self.stack.append(target.key)
        try:
            schema = self._one(target, label, depth)
            for index, part in enumerate(_list(target.value.get("allOf"))):
                where = Target(target.file, (*target.path, "allOf", index), part)
                schema = self._merge(schema, self.convert(where, label, depth), label)
            return schema
        finally:
            self.stack.pop()

    def _one(self, target: Target, label: str, depth: int) -> Schema:
        """One schema object, its ``allOf`` aside."""
        value = target.value
        schema: dict[str, Any] = {}
        nullable = value.get("nullable") is True
        types = self._types(value.get("type"), nullable)
        if types is not None:
            schema["type"] = types[0] if len(types) == 1 else types
        if isinstance(value.get("enum"), list):
            schema["enum"] = [*value["enum"], *([None] if nullable and None not in
                                                value["enum"] else [])]
        for word in _COPIED:
            if word in value and _fits(word, value[word]):
                schema[word] = value[word]
        if "const" in value:
            schema["const"] = value["const"]
        if "exclusiveMinimum" in value or "exclusiveMaximum" in value:
            self._exclusive(schema, value)
        pattern = value.get("pattern")
        if isinstance(pattern, str):
            problem = pattern_problem(pattern)
            if problem is None:
                schema["pattern"] = pattern
            else:
                self.notes.append(f"{label}: pattern {pattern[:40]!r} not kept ({problem[:60]})")
        self._object(schema, target, label, depth)
        self._array(schema, target, label, depth)
        for word in ("oneOf", "anyOf"):
            alternatives = _list(value.get(word))
            if alternatives:
                converted = [self.convert(Target(target.file, (*target.path, word, index), part),
                                          f"{label}|{index}", depth + 1)
                             for index, part in enumerate(alternatives)]
                if nullable and "type" not in schema:
                    converted.append({"type": "null"})
                schema = self._merge(schema, {"anyOf": converted}, label)
        for word in sorted(_UNSUPPORTED.intersection(value)):
            self.notes.append(f"{label}: {word} not kept (outside the output-schema subset)")
        return schema

    def _types(self, written: Any, nullable: bool) -> list[str] | None:
        names = [written] if isinstance(written, str) else _list(written)
        known = [name for name in names if name in JSON_TYPES]
        if not known:
            return None
        if nullable and "null" not in known:
            known.append("null")
        return known

    def _exclusive(self, schema: dict[str, Any], value: Mapping[str, Any]) -> None:
        """3.0's boolean ``exclusiveMinimum``/``Maximum`` beside a bound, or 3.1's number."""
        for word, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            written = value.get(word)
            if written is True and _number(value.get(bound)):
                schema[word] = schema.pop(bound)
            elif _number(written) and not isinstance(written, bool):
                schema[word] = written

    def _object(self, schema: dict[str, Any], target: Target, label: str, depth: int) -> None:
        value = target.value
        properties = value.get("properties")
        write_only: set[str] = set()
        if isinstance(properties, Mapping):
            converted = {}
            for name, sub in properties.items():
                # Followed once: convert's own follow of it then stops at once.
                where = self.refs.follow(Target(target.file, (*target.path, "properties",
                                                             name), sub))
                if _write_only(where.value) or _write_only(sub):
                    write_only.add(str(name))
                    continue
                converted[str(name)] = self.convert(where, f"{label}.{name}", depth + 1)
            schema["properties"] = converted
        required = [name for name in _list(value.get("required"))
                    if isinstance(name, str) and name not in write_only]
        if required:
            schema["required"] = list(dict.fromkeys(required))
        extra = value.get("additionalProperties")
        if isinstance(extra, bool):
            schema["additionalProperties"] = extra
        elif isinstance(extra, Mapping):
            where = Target(target.file, (*target.path, "additionalProperties"), extra)
            schema["additionalProperties"] = self.convert(where, f"{label}{{}}", depth + 1)

    def _array(self, schema: dict[str, Any], target: Target, label: str, depth: int) -> None:
        value = target.value
        items = value.get("items")
        if isinstance(items, Mapping | bool):
            where = Target(target.file, (*target.path, "items"), items)
            schema["items"] = self.convert(where, f"{label}[]", depth + 1)
        prefix = _list(value.get("prefixItems"))
        if prefix:
            schema["prefixItems"] = [
                self.convert(Target(target.file, (*target.path, "prefixItems", index), part),
                             f"{label}[{index}]", depth + 1)
                for index, part in enumerate(prefix)]

    def _merge(self, known: Schema, part: Schema, label: str) -> Schema:
        """The schema of values valid for both ``known`` and ``part`` (or a looser one)."""
        if part is True or part == {}:
            return known
        if known is True or known == {}:
            return part
        if part is False or known is False:
            return False
        merged = dict(known)
        for key, value in part.items():
            if key not in merged:
                merged[key] = value
            elif key == "properties":
                merged[key] = {**merged[key], **{
                    name: self._merge(merged[key][name], sub, f"{label}.{name}")
                    if name in merged[key] else sub for name, sub in value.items()}}
            elif key == "required":
                merged[key] = list(dict.fromkeys([*merged[key], *value]))
            elif key in ("items", "additionalProperties"):
                merged[key] = self._merge(merged[key], value, label)
            elif key == "type":
                merged[key] = self._common_type(merged[key], value, label)
            else:
                merged[key], note = combined_keyword(key, merged[key], value)
                if note:
                    self.notes.append(f"{label}: {note}")
        return merged

    def _common_type(self, known: Any, other: Any, label: str) -> Any:
        first = [known] if isinstance(known, str) else list(known)
        second = {other} if isinstance(other, str) else set(other)
        if "number" in second:
            second.add("integer")
        common = [name for name in first if name in second
                  or (name == "number" and "integer" in second)]
        if not common:
            self.notes.append(f"{label}: allOf parts disagree on type; the first is kept")
            return known
        return common[0] if len(common) == 1 else common


def _fits(word: str, value: Any) -> bool:
    """Whether ``value`` is a valid ``word`` in JSON Schema (else it is not copied)."""
    if word == "uniqueItems":
        return isinstance(value, bool)
    if word in _COUNTS:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if word == "multipleOf":
        return _number(value) and value > 0
    return _number(value)


def _write_only(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("writeOnly") is True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
