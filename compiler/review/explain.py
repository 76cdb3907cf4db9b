"""``capc explain TOOL``: a tool's final descriptor and where each part came from.

Api tools are explained from their manifest entry. Plugin tools are explained from the
manifest's plugin snapshot (``capc compile --plugins``) with the pending overrides applied
the way the loader applies them at boot, so the answer is what an agent gets as long as
the installed plugin is the recorded version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.manifest import manifest_model
from compiler.report.escape import escape_control
from compiler.review.call_options import describe_call_options
from compiler.runtime.descriptors import ToolDescriptor, ToolOverride, apply_override
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import (
    PROVENANCE_FIELDS,
    ApiToolEntry,
    CapabilityEntry,
    ManifestModel,
    PendingOverride,
    SourceLocation,
)
from compiler.runtime.tools.plugin_drift import snapshot_tools

DESCRIPTOR_FIELDS = PROVENANCE_FIELDS


def find_tool(manifest: ManifestModel, name: str) -> tuple[CapabilityEntry, ApiToolEntry] | None:
    """The (capability, tool) whose final or original name is ``name``."""
    for capability in manifest.capabilities:
        tool = capability.tool
        if tool is not None and name in (tool.name, tool.original_name):
            return capability, tool
    return None


def _lines(lines: list[str]) -> str:
    # One line each, controls visible: a name, path or value cannot add a line of its own.
    return "\n".join(escape_control(line) for line in lines) + "\n"


def _where(source: SourceLocation | None) -> str:
    return str(source) if source else "(not set)"


def explain_tool(manifest: ManifestModel | Mapping[str, Any], name: str) -> str | None:
    """The explanation text, or None when the manifest knows no such tool."""
    manifest = manifest_model(manifest)
    if "/" in name:  # SERVER_LABEL/TOOL_NAME: a pinned MCP tool
        from compiler.review.explain_pins import explain_pinned_tool

        return explain_pinned_tool(manifest, name)
    found = find_tool(manifest, name)
    pending = [o for o in manifest.overrides if o.tool == name]
    if found is None:
        plugin_tool = find_plugin_tool(manifest, name)
        if plugin_tool is not None:
            return _explain_plugin_tool(manifest, plugin_tool)
        return _explain_pending(name, pending) if pending else None
    capability, tool = found
    lines = [f"tool {tool.name}  (capability {capability.code}, "
             f"{_where(capability.source)})", ""]
    origin = describe_origin(capability.origin)
    if origin:
        lines += [origin, ""]
    written = tool.to_json()
    for field in DESCRIPTOR_FIELDS:
        lines.append(f"{field}:  [from {_where(tool.provenance.of(field))}]")
        rendered = json.dumps(written[field], indent=2, sort_keys=True, ensure_ascii=False)
        lines += ["  " + line for line in rendered.splitlines()]
    lines.append("")
    if capability.api is not None:
        source = _where(capability.source)
        options = describe_call_options(capability.api.to_json())
        lines += [f"{line}  [from {source}]" for line in options]
        if options:
            lines.append("")
    if tool.overrides:
        lines.append("overrides applied, in order:")
        for override in tool.overrides:
            lines.append(f"  {override.path}:{override.line}  sets {', '.join(override.fields)}")
    else:
        lines.append("overrides applied: none")
    return _lines(lines)


def describe_origin(origin: Mapping[str, Any] | None) -> str | None:
    """One line on where a generated capability came from (``capc import openapi``)."""
    openapi = origin.get("openapi") if origin else None
    if not isinstance(openapi, Mapping):
        return None
    return (f"imported from OpenAPI {openapi.get('title', '?')!r} {openapi.get('version', '')}"
            f" (sha256 {str(openapi.get('sha256', ''))[:12]}…), operation "
            f"{openapi.get('operation', '?')}, by {openapi.get('importer', '?')}")


def _explain_pending(name: str, pending: list[PendingOverride]) -> str:
    lines = [f"tool {name}: not defined in the compiled tree (a plugin tool, resolved at boot)",
             "", "overrides applied at boot, in order:"]
    for override in pending:
        lines.append(f"  {_where(override.source)}  sets {', '.join(override.patch)}")
        rendered = json.dumps(thaw(override.patch), indent=2, sort_keys=True,
                              ensure_ascii=False)
        lines += ["    " + line for line in rendered.splitlines()]
    return _lines(lines)


@dataclass(frozen=True, slots=True)
class PluginToolView:
    """A recorded plugin tool after the manifest's pending overrides, with provenance."""

    distribution: str
    version: str
    codes: tuple[str, ...]
    descriptor: ToolDescriptor
    provenance: dict[str, str]
    overrides: tuple[PendingOverride, ...]


def plugin_tool_views(manifest: ManifestModel) -> dict[str, PluginToolView]:
    """Every plugin tool of the snapshot, by original name, as the loader would expose it."""
    plugins = thaw(manifest.plugins)
    views = {}
    for original, (distribution, tool) in snapshot_tools(plugins).items():
        version = str(plugins[distribution].get("version") or "")
        origin = f"plugin {distribution} {version}".rstrip()
        descriptor = ToolDescriptor(
            name=original, description=str(tool.get("description") or ""),
            input_schema=dict(tool.get("input_schema") or {}))
        provenance = {field: origin for field in ("name", "description", "input_schema")}
        if descriptor.namespace is not None:
            provenance["namespace"] = origin
        applied = []
        for pending in manifest.overrides:
            if pending.tool != original:
                continue
            override = ToolOverride.from_patch(original, thaw(pending.patch))
            descriptor = apply_override(descriptor, override)
            for field in override.fields():
                touched = field.removesuffix("_append").removesuffix("_patch")
                line = pending.lines.get(field, pending.source.line)
                provenance[touched] = f"{pending.source.path}:{line}"
                if touched == "namespace":
                    provenance["name"] = provenance[touched]
            applied.append(pending)
        views[original] = PluginToolView(distribution, version, tuple(tool.get("codes") or ()),
                                         descriptor, provenance, tuple(applied))
    return views


def find_plugin_tool(manifest: ManifestModel, name: str) -> PluginToolView | None:
    """The recorded plugin tool whose original or final name is ``name``."""
    for original, view in plugin_tool_views(manifest).items():
        if name in (original, view.descriptor.name):
            return view
    return None


def _explain_plugin_tool(manifest: ManifestModel, view: PluginToolView) -> str:
    descriptor = view.descriptor
    users = [c.code for c in manifest.capabilities if set(c.internal_codes) & set(view.codes)]
    lines = [f"tool {descriptor.name}  (plugin {view.distribution} {view.version}, codes "
             f"{', '.join(view.codes) or '-'}; capabilities {', '.join(users) or '-'})", ""]
    for field in DESCRIPTOR_FIELDS:
        value = getattr(descriptor, field)
        lines.append(f"{field}:  [from {view.provenance.get(field, '(not set)')}]")
        rendered = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        lines += ["  " + line for line in rendered.splitlines()]
    lines.append("")
    if view.overrides:
        lines.append("overrides applied at boot, in order:")
        for pending in view.overrides:
            lines.append(f"  {_where(pending.source)}  sets {', '.join(pending.patch)}")
    else:
        lines.append("overrides applied: none")
    lines.append("(from the manifest's plugin snapshot; the installed plugin may differ: "
                 "the loader warns at boot when it does)")
    return _lines(lines)


def unknown_tool_message(manifest: ManifestModel | Mapping[str, Any], name: str,
                         manifest_path: str) -> str:
    """Why ``name`` is not a tool of the manifest, with the nearest tool name, and what it
    is instead when it names a capability or an MCP server."""
    import difflib

    manifest = manifest_model(manifest)
    views = plugin_tool_views(manifest)
    names: set[str] = set()
    for capability in manifest.capabilities:
        if capability.tool is not None:
            names |= {capability.tool.name, capability.tool.original_name}
    for original, view in views.items():
        names |= {original, view.descriptor.name}
    message = f"no tool {name!r} in {manifest_path}"
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    if close:
        message += f"; did you mean {close[0]!r}?"
    for capability in manifest.capabilities:
        server = capability.mcp.server_label if capability.mcp is not None else None
        if capability.mcp is not None and name in (server, capability.code):
            return (f"{message} ({name!r} is an MCP server: the model calls its tools through "
                    "the provider; explain a pinned one as LABEL/TOOL, or see "
                    f"`capc docs -m {manifest_path}`)")
        if name == capability.code:
            tools = ([capability.tool.name] if capability.tool is not None else
                     sorted(view.descriptor.name for view in views.values()
                            if set(capability.internal_codes) & set(view.codes)))
            listed = f": {', '.join(tools)}" if tools else ""
            return (f"{message} ({name!r} is a capability code; explain one of its "
                    f"tools{listed})")
    return message
