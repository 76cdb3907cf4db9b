"""The tool definitions each capability puts in front of a model, read from the manifest.

api tools: their final descriptor (a strict one in the strict form the runtime binds).
Pinned MCP servers: the reviewed listing (overrides applied, narrowed by
``allowed_tools``), read from the pins without connecting. Internal capabilities: the
plugin tools recorded by ``compile --plugins``, with the manifest's pending ToolOverrides
applied in order as the loader applies them at boot (name, namespace, description, input
schema), so a budget costs what the model is sent. What cannot be known (an unpinned server,
internal tools without a recorded catalogue) is :class:`Unknown`, never an empty list, so
a budget never reads "0 tokens" for what it could not see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.profiles.tokens import Definition
from compiler.runtime.descriptors import ToolDescriptor, ToolOverride, apply_override
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import CapabilityEntry, PendingOverride
from compiler.runtime.tools.strict import strict_form

# Registry tool name -> the overrides of it, in the order the loader applies them.
BootOverrides = Mapping[str, Sequence[ToolOverride]]


@dataclass(frozen=True, slots=True)
class Unknown:
    """A capability whose tool definitions cannot be known at compile time, and why."""

    code: str
    reason: str
    # The capability's kind: a deferred MCP server is no entry up front whatever its
    # tools, a deferred internal capability may form a namespace (docs/profiles.md).
    kind: str = ""


@dataclass(frozen=True, slots=True)
class CapabilityTools:
    """The definitions of one capability (``unknown`` set when they cannot be known)."""

    code: str
    kind: str
    definitions: tuple[Definition, ...] = ()
    unknown: Unknown | None = None


def boot_overrides(pending: Iterable[PendingOverride]) -> BootOverrides:
    """The manifest's pending overrides (plugin tools), grouped by the tool they patch."""
    grouped: dict[str, list[ToolOverride]] = {}
    for override in pending:
        grouped.setdefault(override.tool, []).append(override.tool_override())
    return grouped


def capability_tools(entry: CapabilityEntry, plugins: Mapping[str, Any],
                     overrides: BootOverrides | None = None) -> CapabilityTools:
    """What ``entry`` sends a model, as definitions (``overrides``: :func:`boot_overrides`
    of the manifest, applied to plugin tools; api and MCP tools carry theirs already)."""
    if entry.tool is not None:
        tool = entry.tool
        # A strict tool is bound in its strict form (every field required, optional ones
        # nullable, constraints in words): that is what the provider is sent and bills.
        schema = strict_form(tool.input_schema) if tool.strict else tool.input_schema
        return CapabilityTools(entry.code, "api", (
            Definition(tool.name, tool.description, schema),))
    if entry.mcp is not None:
        pins = entry.mcp.pins
        if pins is None:
            return CapabilityTools(entry.code, "mcp", unknown=Unknown(
                entry.code, f"MCP server {entry.mcp.server_label!r} is not pinned "
                "(run capc lock): its tools are unknown", "mcp"))
        allowed = entry.mcp.allowed_tools
        names = set(allowed) if isinstance(allowed, (list, tuple)) else None
        return CapabilityTools(entry.code, "mcp", tuple(
            Definition(pin.name, pin.shown_description or "", pin.shown_input_schema)
            for pin in pins if names is None or pin.name in names))
    return _internal_tools(entry, plugins, overrides or {})


def _internal_tools(entry: CapabilityEntry, plugins: Mapping[str, Any],
                    overrides: BootOverrides) -> CapabilityTools:
    found: list[Definition] = []
    missing: list[str] = []
    for registry_code in entry.internal_codes:
        tools = _recorded_tools(plugins, registry_code, overrides)
        if tools is None:
            missing.append(registry_code)
        else:
            found += tools
    if missing:
        return CapabilityTools(entry.code, "internal", unknown=Unknown(
            entry.code, f"no plugin tools are recorded for {', '.join(missing)} "
            "(compile with --plugins to cost them)", "internal"))
    return CapabilityTools(entry.code, "internal", tuple(found))


def _recorded_tools(plugins: Mapping[str, Any], registry_code: str,
                    overrides: BootOverrides) -> list[Definition] | None:
    """The recorded tools of ``registry_code`` from the plugin catalogue, as the loader
    shows them after ``overrides``, or None."""
    for distribution in plugins.values():
        if not isinstance(distribution, Mapping):
            continue
        code = (distribution.get("codes") or {}).get(registry_code)
        if not isinstance(code, Mapping):
            continue
        tools = distribution.get("tools") or {}
        definitions = []
        for name in code.get("tools") or ():
            tool = tools.get(name)
            if not isinstance(tool, Mapping):
                return None
            definitions.append(_as_sent(tool, name, overrides.get(name, ())))
        return definitions
    return None


def _as_sent(tool: Mapping[str, Any], name: str,
             overrides: Sequence[ToolOverride]) -> Definition:
    """One recorded plugin tool after its overrides (the runtime's own ``apply_override``,
    in order, each seeing the previous result; overrides target the registry name)."""
    recorded = Definition(str(tool.get("name", name)), str(tool.get("description") or ""),
                          tool.get("input_schema") or {})
    if not overrides:
        return recorded
    descriptor = ToolDescriptor(recorded.name, recorded.description,
                                thaw(recorded.input_schema), original_name=name)
    for override in overrides:
        descriptor = apply_override(descriptor, override)
    return Definition(descriptor.name, descriptor.description, descriptor.input_schema)

