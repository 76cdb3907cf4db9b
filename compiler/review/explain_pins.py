"""``capc explain LABEL/TOOL``: a pinned MCP tool as the model is shown it, and from where.

The listed descriptor comes from the lock (``capc.lock``, recorded in the manifest's
``mcp.pins``); each ToolOverride of ``LABEL/TOOL`` that changed it is named with its line.
"""

from __future__ import annotations

import json

from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import CapabilityEntry, ManifestModel
from compiler.runtime.manifest.pinned import PinnedToolEntry


def find_pinned_tool(manifest: ManifestModel, target: str
                     ) -> tuple[CapabilityEntry, PinnedToolEntry] | None:
    """The (capability, pinned tool) of ``SERVER_LABEL/TOOL_NAME``, or None."""
    label, _, name = target.partition("/")
    for capability in manifest.capabilities:
        mcp = capability.mcp
        if mcp is None or mcp.server_label != label or mcp.pins is None:
            continue
        for tool in mcp.pins:
            if tool.name == name:
                return capability, tool
    return None


def explain_pinned_tool(manifest: ManifestModel, target: str) -> str | None:
    """The explanation text of a pinned MCP tool, or None when the manifest pins no such tool."""
    found = find_pinned_tool(manifest, target)
    if found is None:
        return None
    capability, tool = found
    values = {"name": tool.name, "description": tool.shown_description,
              "input_schema": thaw(tool.shown_input_schema),
              "annotations": thaw(tool.annotations)}
    lines = [f"tool {target}  (MCP server {target.partition('/')[0]}, capability "
             f"{capability.code}, {capability.source})", f"pinned digest: {tool.digest}", ""]
    for field, value in values.items():
        if field == "annotations" and value is None:
            continue
        where = tool.provenance.get(field)
        origin = str(where) if where else "the lock (as the server listed it)"
        lines.append(f"{field}:  [from {origin}]")
        rendered = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        lines += ["  " + line for line in rendered.splitlines()]
    lines.append("")
    if tool.overrides:
        lines.append("overrides applied, in order:")
        lines += [f"  {override.path}:{override.line}  sets {', '.join(override.fields)}"
                  for override in tool.overrides]
    else:
        lines.append("overrides applied: none")
    return "\n".join(lines) + "\n"
