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

from compiler.runtime.descriptors import ToolDescriptor, ToolOverride, apply_override
from compiler.runtime.tools.drift import snapshot_tools

DESCRIPTOR_FIELDS = ("name", "description", "input_schema", "output_schema", "namespace")


def find_tool(manifest: dict[str, Any], name: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The (capability, tool) whose final or original name is ``name``."""
    for capability in manifest.get("capabilities", []):
        tool = capability.get("tool")
        if tool and name in (tool["name"], tool["original_name"]):
            return capability, tool
    return None


def _where(source: dict[str, Any] | None) -> str:
    return f"{source['path']}:{source['line']}" if source else "(not set)"


def explain_tool(manifest: dict[str, Any], name: str) -> str | None:
    """The explanation text, or None when the manifest knows no such tool."""
    found = find_tool(manifest, name)
    pending = [o for o in manifest.get("overrides", []) if o["tool"] == name]
    if found is None:
        plugin_tool = find_plugin_tool(manifest, name)
        if plugin_tool is not None:
            return _explain_plugin_tool(manifest, plugin_tool)
        return _explain_pending(name, pending) if pending else None
    capability, tool = found
    lines = [f"tool {tool['name']}  (capability {capability['code']}, "
             f"{_where(capability['source'])})", ""]
    for field in DESCRIPTOR_FIELDS:
        value = tool.get(field)
        lines.append(f"{field}:  [from {_where(tool['provenance'].get(field))}]")
        rendered = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        lines += ["  " + line for line in rendered.splitlines()]
    lines.append("")
    if tool["overrides"]:
        lines.append("overrides applied, in order:")
        for override in tool["overrides"]:
            lines.append(f"  {_where(override)}  sets {', '.join(override['fields'])}")
    else:
        lines.append("overrides applied: none")
    return "\n".join(lines) + "\n"


def _explain_pending(name: str, pending: list[dict[str, Any]]) -> str:
    lines = [f"tool {name}: not defined in the compiled tree (a plugin tool, resolved at boot)",
             "", "overrides applied at boot, in order:"]
    for override in pending:
        lines.append(f"  {_where(override['source'])}  sets {', '.join(override['patch'])}")
        rendered = json.dumps(override["patch"], indent=2, sort_keys=True, ensure_ascii=False)
        lines += ["    " + line for line in rendered.splitlines()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class PluginToolView:
    """A recorded plugin tool after the manifest's pending overrides, with provenance."""

    distribution: str
    version: str
    codes: tuple[str, ...]
    descriptor: ToolDescriptor
    provenance: dict[str, str]
    overrides: tuple[Mapping[str, Any], ...]


def plugin_tool_views(manifest: Mapping[str, Any]) -> dict[str, PluginToolView]:
    """Every plugin tool of the snapshot, by original name, as the loader would expose it."""
    plugins = manifest.get("plugins") or {}
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
        for pending in manifest.get("overrides") or []:
            if pending.get("tool") != original:
                continue
            override = ToolOverride.from_patch(original, dict(pending["patch"]))
            descriptor = apply_override(descriptor, override)
            lines = pending.get("lines") or {}
            for field in override.fields():
                touched = field.removesuffix("_append").removesuffix("_patch")
                document = pending.get("source") or {}
                provenance[touched] = _where({**document, "line": lines.get(field,
                                                                            document.get("line"))})
                if touched == "namespace":
                    provenance["name"] = provenance[touched]
            applied.append(pending)
        views[original] = PluginToolView(distribution, version, tuple(tool.get("codes") or ()),
                                         descriptor, provenance, tuple(applied))
    return views


def find_plugin_tool(manifest: Mapping[str, Any], name: str) -> PluginToolView | None:
    """The recorded plugin tool whose original or final name is ``name``."""
    for original, view in plugin_tool_views(manifest).items():
        if name in (original, view.descriptor.name):
            return view
    return None


def _explain_plugin_tool(manifest: Mapping[str, Any], view: PluginToolView) -> str:
    descriptor = view.descriptor
    users = [c["code"] for c in manifest.get("capabilities", []) if c.get("type") == "internal"
             and set((c.get("internal") or {}).get("codes") or []) & set(view.codes)]
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
            lines.append(f"  {_where(pending.get('source'))}  sets {', '.join(pending['patch'])}")
    else:
        lines.append("overrides applied: none")
    lines.append("(from the manifest's plugin snapshot; the installed plugin may differ: "
                 "the loader warns at boot when it does)")
    return "\n".join(lines) + "\n"
