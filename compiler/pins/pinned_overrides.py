"""``kind: ToolOverride`` of a pinned MCP tool (``tool: SERVER_LABEL/TOOL_NAME``).

The override patches the pinned descriptor the model is shown (docs/overrides.md rules:
same fields, same composition order, each on a copy of the previous result). The server
still receives its own tool name and the arguments its listed schema declares, so
``namespace`` (a rename) and the output schema (not part of a pin) cannot be overridden
here. The listed descriptor and its digest stay in the pin: drift is always checked
against what the server listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from compiler.diagnostics import Code, Diagnostic
from compiler.overrides import (
    OVERRIDE_REMOVES_REQUIRED,
    OVERRIDE_UNBOUND_PARAMETER,
    OVERRIDE_UNKNOWN_TOOL,
    check_pattern,
    consumer_only_problems,
    invalid_schema,
    override_of,
)
from compiler.runtime.descriptors import ToolDescriptor, apply_override
from compiler.runtime.manifest.fields import freeze, thaw
from compiler.runtime.manifest.model import AppliedOverride, CapabilityEntry, SourceLocation
from compiler.runtime.manifest.pinned import PinnedToolEntry
from compiler.source.documents import SourceDocument

OVERRIDE_MCP_FIELD = Code("override-mcp-field", "a field that cannot be overridden on an MCP tool")
CODES = (OVERRIDE_MCP_FIELD,)

MCP_PATCHABLE = ("description", "description_append", "input_schema", "input_schema_patch")


def is_pinned_target(name: str) -> bool:
    """True for an override target of the form ``SERVER_LABEL/TOOL_NAME``."""
    return "/" in name


def apply_pin_overrides(documents: Iterable[SourceDocument], entries: list[CapabilityEntry]
                        ) -> tuple[list[CapabilityEntry], list[Diagnostic]]:
    """``entries`` with ``LABEL/TOOL`` overrides applied to their pins, in order."""
    pinned: dict[str, PinnedToolEntry] = {}
    for entry in entries:
        if entry.mcp is not None and entry.mcp.pins is not None:
            for tool in entry.mcp.pins:
                pinned[f"{entry.mcp.server_label}/{tool.name}"] = tool
    found: list[Diagnostic] = []
    declared: dict[str, frozenset[str]] = {}  # consumer-only parameters, per target
    for document in documents:
        override = override_of(document)
        target = document.data["tool"]
        if override is None:
            continue  # reported as override-empty with the others
        current = pinned.get(target)
        if current is None:
            import difflib  # only an error's "did you mean" needs it
            close = difflib.get_close_matches(target, list(pinned), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            found.append(Diagnostic.warning(
                document.location(("tool",)), OVERRIDE_UNKNOWN_TOOL,
                f"no pinned MCP tool {target!r} (SERVER_LABEL/TOOL_NAME of a server in the "
                f"lock){hint}; the override is not applied"))
            continue
        refused = [name for name in override.fields() if name not in MCP_PATCHABLE]
        if refused:
            found += [Diagnostic.error(
                document.location((name,)), OVERRIDE_MCP_FIELD,
                f"{name} cannot be overridden on an MCP tool: the server is called by its own "
                "name and has no pinned output schema") for name in refused]
            continue
        before = ToolDescriptor(name=current.name, description=current.shown_description or "",
                                input_schema=thaw(current.shown_input_schema),
                                output_schema=None, original_name=current.name,
                                consumer_only=declared.get(target, frozenset()))
        after = apply_override(before, override)
        problems = _validate(document, current, after.input_schema, after.consumer_only)
        listed = (current.input_schema.get("properties") or {}).keys()
        problems += consumer_only_problems(document, override, after, listed)
        found += problems
        declared[target] = after.consumer_only
        if not any(problem.is_error for problem in problems):
            pinned[target] = _recorded(document, current, after, override.fields())
    return [_with_pins(entry, pinned) for entry in entries], found


def _recorded(document: SourceDocument, tool: PinnedToolEntry, after: ToolDescriptor,
              fields: list[str]) -> PinnedToolEntry:
    provenance = dict(tool.provenance)
    for field_name in fields:
        touched = field_name.removesuffix("_append").removesuffix("_patch")
        provenance[touched] = SourceLocation(document.path,
                                             document.location((field_name,)).line)
    applied = AppliedOverride(document.path, document.first_line, tuple(fields))
    return replace(tool, shown=freeze({"description": after.description,
                                       "input_schema": after.input_schema}),
                   overrides=(*tool.overrides, applied), provenance=MappingProxyType(provenance))


def _with_pins(entry: CapabilityEntry, pinned: Mapping[str, PinnedToolEntry]) -> CapabilityEntry:
    if entry.mcp is None or entry.mcp.pins is None:
        return entry
    label = entry.mcp.server_label
    pins = tuple(pinned[f"{label}/{tool.name}"] for tool in entry.mcp.pins)
    return replace(entry, mcp=replace(entry.mcp, pins=pins))


def _validate(document: SourceDocument, tool: PinnedToolEntry,
              schema: dict[str, Any], consumer_only: frozenset[str]) -> list[Diagnostic]:
    path = ("input_schema_patch",) if "input_schema_patch" in document.data else ("input_schema",)
    if schema == thaw(tool.shown_input_schema):
        return []
    at = document.location(path)
    invalid = invalid_schema(at, schema)
    if invalid:
        return invalid
    listed = tool.input_schema.get("properties") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    found: list[Diagnostic] = []
    for name in properties:
        if name not in listed and name not in consumer_only:
            found.append(Diagnostic.warning(
                document.location((*path, "properties", name)), OVERRIDE_UNBOUND_PARAMETER,
                f"parameter {name!r} is not in the server's listed schema: the model may send "
                "it, and it is dropped before the call"))
    for name in tool.input_schema.get("required") or []:
        if name not in properties or (name not in required and "default" not in properties[name]):
            found.append(Diagnostic.error(
                at, OVERRIDE_REMOVES_REQUIRED,
                f"the server requires argument {name!r}, which this override removes or makes "
                "optional without a default"))
    for name, prop in properties.items():
        if isinstance(prop, dict):
            found += check_pattern(document.location((*path, "properties", name, "pattern")),
                                    name, prop.get("pattern"))
    return found
