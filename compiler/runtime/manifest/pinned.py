"""The manifest model of a pinned MCP tool (``mcp.pins.tools[]``, from ``capc.lock``).

Like the entries of ``compiler.runtime.manifest.model``, the class keeps its fields,
``parse`` and ``to_json`` side by side. A pinned tool is what the server listed when it
was locked (``name``, ``description``, ``input_schema``, ``annotations``, and the
``digest`` over those four), plus what the tree's ``LABEL/TOOL`` overrides made of it:
``shown`` (the description and input schema the model is shown, only when overridden),
the overrides applied and where each shown field came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from compiler.runtime.manifest.fields import (
    BUILD,
    LISTS,
    OBJECTS,
    EntryShapeError,
    JsonObject,
    ParseMode,
    json_object,
    object_or_empty,
    optional_string,
    required_string,
    thaw,
)
from compiler.runtime.manifest.origins import AppliedOverride, SourceLocation
from compiler.runtime.records import record

SHOWN_FIELDS = ("description", "input_schema")


@record(frozen=True, slots=True)
class PinnedToolEntry:
    """One pinned tool of an MCP server: the listed descriptor and what the model sees."""

    name: str
    digest: str
    description: str | None = None
    input_schema: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    annotations: Mapping[str, Any] | None = None
    overrides: tuple[AppliedOverride, ...] = ()
    shown: Mapping[str, Any] | None = None
    provenance: Mapping[str, SourceLocation] = field(
        default_factory=lambda: MappingProxyType({}))

    @property
    def overridden(self) -> bool:
        """True when an override changed what the model is shown."""
        return self.shown is not None

    @property
    def shown_description(self) -> str | None:
        """The description the model is shown."""
        if self.shown is None:
            return self.description
        shown: str | None = self.shown["description"]
        return shown

    @property
    def shown_input_schema(self) -> Mapping[str, Any]:
        """The input schema the model is shown."""
        if self.shown is None:
            return self.input_schema
        shown: Mapping[str, Any] = self.shown["input_schema"]
        return shown

    def listed(self) -> JsonObject:
        """The pinned fields as the server listed them (what the digest covers)."""
        written: JsonObject = {"name": self.name, "description": self.description,
                               "input_schema": thaw(self.input_schema)}
        if self.annotations is not None:
            written["annotations"] = thaw(self.annotations)
        return written

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> PinnedToolEntry:
        """The entry of one ``mcp.pins.tools[]`` object."""
        raw = json_object(raw, "mcp.pins.tools[]")
        annotations = raw.get("annotations")
        if annotations is not None:
            json_object(annotations, "annotations")
        overrides = raw.get("overrides") or ()
        if not isinstance(overrides, LISTS):
            raise EntryShapeError("overrides must be a list")
        shown = raw.get("shown")
        if shown is not None:
            json_object(shown, "shown")
            optional_string(shown, "description")
            if set(shown) != set(SHOWN_FIELDS):
                raise EntryShapeError("shown must hold description and input_schema")
            json_object(shown["input_schema"], "shown.input_schema")
        provenance = {key: SourceLocation.parse(value, f"provenance.{key}", mode)
                      for key, value in object_or_empty(raw, "provenance").items()}
        return mode.make(
            cls,
            required_string(raw, "name"),
            required_string(raw, "digest"),
            optional_string(raw, "description"),
            mode.freeze(object_or_empty(raw, "input_schema")),
            mode.freeze(annotations),
            tuple(AppliedOverride.parse(item, mode) for item in overrides),
            mode.freeze(shown),
            MappingProxyType(provenance),
        )

    def to_json(self) -> JsonObject:
        """The pinned tool's JSON object (``shown`` and ``provenance`` only when overridden)."""
        written = {**self.listed(), "digest": self.digest,
                   "overrides": [override.to_json() for override in self.overrides]}
        if self.shown is not None:
            written["shown"] = thaw(self.shown)
        if self.provenance:
            written["provenance"] = {key: location.to_json()
                                     for key, location in sorted(self.provenance.items())}
        return written


def parse_pins(raw: Any, mode: ParseMode = BUILD) -> tuple[PinnedToolEntry, ...] | None:
    """The ``mcp.pins`` block's tools (None when the server is not pinned)."""
    if raw is None:
        return None
    if not isinstance(raw, OBJECTS) or not isinstance(raw.get("tools"), LISTS):
        raise EntryShapeError("pins must be an object with a tools list")
    return tuple(PinnedToolEntry.parse(item, mode) for item in raw["tools"])
