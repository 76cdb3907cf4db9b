"""``capc explain TOOL``: a tool's final descriptor and where each part came from."""

from __future__ import annotations

import json
from typing import Any

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
