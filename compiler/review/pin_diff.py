"""``capc diff`` for pinned MCP tools: per server, tools added, removed and changed.

A pinned tool added is security-relevant (the agent may call something nobody reviewed
before), and so is a changed description or schema (the text the model obeys, the
arguments it sends), whether the server's listing changed or an override changed what
the model is shown. Kept apart from :mod:`compiler.review.diff` so each reads on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler.pins.compare import compare_listings
from compiler.review.changes import ABSENT, EntryChange, FieldChange, SecurityFinding
from compiler.runtime.manifest.model import ManifestModel

PIN_RANKS = {"pinned-tool-added": 9, "pinned-tool-changed": 10}


def _pins_by_label(manifest: ManifestModel) -> dict[str, list[Mapping[str, Any]]]:
    return {capability.mcp.server_label: [tool.to_json() for tool in capability.mcp.pins]
            for capability in manifest.capabilities
            if capability.mcp is not None and capability.mcp.pins is not None}


def _shown(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What the model is shown: the listed descriptor with the overrides' result on top."""
    shown = tool.get("shown") or {}
    return {"name": tool["name"], "description": shown.get("description", tool.get("description")),
            "input_schema": shown.get("input_schema", tool.get("input_schema"))}


def pin_entry_changes(old: ManifestModel, new: ManifestModel) -> list[EntryChange]:
    """One ``pin`` entry per server whose pins were added, removed or changed."""
    before, after = _pins_by_label(old), _pins_by_label(new)
    entries = []
    for label in sorted(before.keys() | after.keys()):
        if label not in before or label not in after:
            status = "added" if label not in before else "removed"
            tools = after.get(label) or before.get(label) or []
            fields = tuple(FieldChange(f"tools.{tool['name']}", *(
                (ABSENT, "pinned") if status == "added" else ("pinned", ABSENT))) for tool in tools)
            entries.append(EntryChange("pin", label, status, "MCP server pins", fields))
            continue
        changes = list(_tool_field_changes(before[label], after[label]))
        if changes:
            entries.append(EntryChange("pin", label, "changed", "MCP server pins",
                                       tuple(changes)))
    return entries


def _tool_field_changes(before: list[Mapping[str, Any]],
                        after: list[Mapping[str, Any]]) -> Iterable[FieldChange]:
    listed = compare_listings(before, after)
    for name in listed.added:
        yield FieldChange(f"tools.{name}", ABSENT, "pinned")
    for name in listed.removed:
        yield FieldChange(f"tools.{name}", "pinned", ABSENT)
    old_tools = {tool["name"]: tool for tool in before}
    new_tools = {tool["name"]: tool for tool in after}
    shown = compare_listings([_shown(t) for t in before], [_shown(t) for t in after])
    changed = {change.name: set(change.fields) for change in listed.changed}
    for change in shown.changed:
        changed.setdefault(change.name, set()).update(change.fields)
    for name in sorted(changed):
        for field in sorted(changed[name]):
            old_value = _shown(old_tools[name]).get(field, old_tools[name].get(field, ABSENT))
            new_value = _shown(new_tools[name]).get(field, new_tools[name].get(field, ABSENT))
            if field == "annotations":
                old_value = old_tools[name].get(field, ABSENT)
                new_value = new_tools[name].get(field, ABSENT)
            yield FieldChange(f"tools.{name}.{field}", old_value, new_value)


def pin_findings(old: ManifestModel, new: ManifestModel) -> Iterable[SecurityFinding]:
    """Security findings of pin changes: new pinned tools, changed descriptions or schemas."""
    before = _pins_by_label(old)
    for entry in pin_entry_changes(old, new):
        if entry.status == "removed":
            continue
        for change in entry.fields:
            parts = change.path.split(".")
            if change.old is ABSENT and len(parts) == 2:
                known = " (a newly pinned server)" if entry.key not in before else ""
                yield SecurityFinding(PIN_RANKS["pinned-tool-added"], "pinned-tool-added",
                                      entry.key, f"MCP tool {parts[1]!r} is now pinned, "
                                      f"so it may be offered{known}")
            elif len(parts) == 3 and parts[2] in ("description", "input_schema"):
                yield SecurityFinding(PIN_RANKS["pinned-tool-changed"], "pinned-tool-changed",
                                      entry.key, f"MCP tool {parts[1]!r}: {parts[2]} changed "
                                      "(the text the model obeys)")
