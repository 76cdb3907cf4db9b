"""A JSON Schema of the document → one SPEC §10 parameter entry.

What the mapping keeps and how it bends what §10 cannot say:

- ``$ref`` is followed (:mod:`refs`); a schema that is already being expanded on the
  current path is not expanded again (cycles are cut at depth 1): it becomes an empty
  object and the cut is reported.
- ``allOf`` is merged (properties, ``required``); ``oneOf``/``anyOf``, which a §10 entry
  cannot hold, are rewritten to the nearest entry that only lets valid values through
  (``null`` as ``nullable``, scalars of one type with their enums joined, else the first
  alternative) with a note saying what was lost (:mod:`schema_merge`).
- ``readOnly`` properties are left out of inputs; 3.1 type arrays and 3.0 ``nullable``
  become ``nullable``; a scalar's constraints are copied by :mod:`schema_scalars` (unknown
  formats dropped, patterns Python cannot compile dropped with a note).
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.naming import argument_name, is_identifier, wire_name_problem
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.schema_merge import Merged, merge
from compiler.authoring.openapi.schema_scalars import (
    SCALARS,
    copy_int,
    scalar_entry,
)
from compiler.diagnostics import Code
from compiler.runtime.manifest.parameters import WIRE_NAME
from compiler.source.safe_read import MAX_SOURCE_BYTES

OPENAPI_EXPANSION = Code("openapi-expansion", "an operation's schemas expand past the size limit")
CODES = (OPENAPI_EXPANSION,)

MAX_DEPTH = 8
MAX_SCHEMA_NODES = 5_000
# What the entries of one operation may hold, in characters of text (descriptions, enum
# values, defaults, patterns, names): a file over MAX_SOURCE_BYTES is one capc would not
# read, so an operation past it is refused before it is rendered.
MAX_OPERATION_CHARACTERS = MAX_SOURCE_BYTES
# The whole import's bounds grow with the document, so what it makes stays linear in what
# the document holds: at least these, or so much per character of the document. Microsoft
# Graph's 20 MB make 94 M characters and 1.5 M nodes with every operation imported; a
# fixed 64 M left its last 3,105 operations out, however small each was.
MIN_TOTAL_NODES = 4_000_000
MIN_TOTAL_CHARACTERS = 64 * 1024 * 1024
CHARACTERS_PER_DOCUMENT_CHARACTER = 8
DOCUMENT_CHARACTERS_PER_NODE = 4
# How deep references are followed when a schema fans out past MAX_SCHEMA_NODES: each
# tried in turn (every try bounded by MAX_SCHEMA_NODES again).
REF_DEPTHS = (3, 2, 1)
_CUT_MARK = "__cut__"
_NAVIGATION = "x-ms-navigationProperty"
_TYPES = (*SCALARS, "array", "object")


class Unexpressible(Exception):
    """The operation needs something §10 cannot say; it is skipped with this reason."""


@dataclass(slots=True)
class Budget:
    """Schema nodes walked and the characters their entries hold: per operation and for
    the whole import. A node costs what it renders, not only one count: 5,000 nodes that
    each repeat a 30 KB enum are 150 MB of output from a 44 KB document."""

    max_total: int = MIN_TOTAL_NODES
    max_total_characters: int = MIN_TOTAL_CHARACTERS
    total: int = 0
    operation: int = 0
    total_characters: int = 0
    operation_characters: int = 0

    @classmethod
    def for_document(cls, characters: int) -> Budget:
        """The budget of an import of a document of ``characters`` characters."""
        return cls(max(MIN_TOTAL_NODES, characters // DOCUMENT_CHARACTERS_PER_NODE),
                   max(MIN_TOTAL_CHARACTERS, characters * CHARACTERS_PER_DOCUMENT_CHARACTER))

    @property
    def spent(self) -> bool:
        """Whether the whole import's bounds are passed (no operation fits any more)."""
        return self.total > self.max_total or self.total_characters > self.max_total_characters

    def start_operation(self) -> None:
        """Reset the per-operation bounds."""
        self.operation = self.operation_characters = 0

    def spend_characters(self, target: Target, count: int) -> None:
        """Count ``count`` characters of entries; refuse (located) past either bound."""
        self.total_characters += count
        self.operation_characters += count
        if self.operation_characters > MAX_OPERATION_CHARACTERS:
            _refuse(target, f"{MAX_OPERATION_CHARACTERS} characters of arguments")
        self._check_total(target)

    def spend(self, refs: References, target: Target) -> None:
        """Count one node; refuse (located) once either bound is passed."""
        self.total += 1
        self.operation += 1
        if self.operation > MAX_SCHEMA_NODES:
            _refuse(target, f"{MAX_SCHEMA_NODES} nodes")
        self._check_total(target)

    def _check_total(self, target: Target) -> None:
        """Refuse (located) once the whole import's bounds are passed: this operation and
        every one after it, each with the reason and a way out."""
        if self.spent:
            raise ImportRefused((target.file.error(
                target.path, OPENAPI_EXPANSION,
                f"the import's bounds are spent ({self.max_total_characters} characters "
                f"of arguments, {self.max_total} schema nodes, from the document's size): "
                "its schemas fan out; import the rest in another run (--operations, "
                "another -o)"),))


def _refuse(target: Target, bound: str) -> NoReturn:
    """One operation's schemas are past ``bound``: refused (located), the operation skipped."""
    raise ImportRefused((target.file.error(
        target.path, OPENAPI_EXPANSION, f"the schemas here expand past {bound} (references "
        "fanning out?): refused so the import stays bounded"),))


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
                and not self.budget.spent)

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
            merged = merge(self, target, label)
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

    # -- one entry ------------------------------------------------------------------------

    def _convert(self, merged: Merged, label: str, depth: int) -> dict[str, Any]:
        keywords = merged.keywords
        kind, nullable = self._type(merged, label)
        entry: dict[str, Any] = {"type": kind}
        description = keywords.get("description") or keywords.get("title")
        if isinstance(description, str) and description.strip():
            entry["description"] = clean_text(description, 500)
        if nullable:
            entry["nullable"] = True
        if kind in SCALARS:
            scalar_entry(entry, keywords, kind, label, self.notes)
        elif kind == "array":
            items = keywords.get("items")
            if isinstance(items, Target):
                converted = self.entry(items, f"{label}[]", depth + 1)
                if converted is not None and converted.pop(_CUT_MARK, False):
                    entry[_CUT_MARK] = True  # an optional list of cut objects: left out
                entry["items"] = converted or {"type": "string"}
            else:
                entry["items"] = {"type": "string"}
            copy_int(entry, keywords, ("minItems", "min_items"), ("maxItems", "max_items"))
        else:
            self._object(entry, merged, label, depth)
        return entry

    def _type(self, merged: Merged, label: str) -> tuple[str, bool]:
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

    def _object(self, entry: dict[str, Any], merged: Merged, label: str, depth: int) -> None:
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


def _object_like(schema: Mapping[str, Any]) -> bool:
    """Whether a schema describes an object (what a reference fan-out is made of)."""
    return (schema.get("type") == "object" or "properties" in schema or "allOf" in schema)


_CHILDREN = ("items", "properties", "additional_properties")


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


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []

