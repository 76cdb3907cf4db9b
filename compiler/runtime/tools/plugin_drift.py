"""Drift between a manifest's plugin snapshot and the plugins installed at boot.

``capc compile --plugins`` records, in the manifest's ``plugins`` section, each plugin
distribution the tree uses: its version, the registry codes the tree names and their
tools' descriptors (docs/manifest.md). When the agent boots with other plugin versions,
what was reviewed is not what runs; :func:`plugin_drift` says how, and
:func:`log_plugin_drift` logs it at WARNING. Drift never stops the boot: the tools the
plugins register now are the ones used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

from compiler.runtime.manifest.read import thaw
from compiler.runtime.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

MAX_SCHEMA_PATHS = 5


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def snapshot_tools(snapshot: Mapping[str, Any]) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Every tool the snapshot records, by name: (distribution, tool entry)."""
    tools: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for distribution in sorted(snapshot):
        entry = snapshot[distribution]
        recorded = entry.get("tools") if isinstance(entry, Mapping) else None
        if not isinstance(recorded, Mapping):
            continue  # not the documented shape: nothing recorded to compare
        for name, tool in recorded.items():
            tools.setdefault(name, (distribution, tool))
    return tools


def plugin_drift(
    snapshot: Mapping[str, Any],
    registry: ToolRegistry,
    version_of: Callable[[str], str | None] = installed_version,
) -> list[str]:
    """One message per difference between ``snapshot`` and what ``registry`` holds now.

    Reported: a distribution at another version or not installed, a recorded code or
    tool no longer registered, a tool whose description or input schema changed. Tools
    a plugin registers in addition are not drift (a plugin may add tools per context).
    """
    if not snapshot:
        return []  # compiled without --plugins: nothing was recorded
    from compiler.runtime.tools.plugin_overrides import describe_tool

    messages: list[str] = []
    live_tools = registry.all_tools()
    for distribution in sorted(snapshot):
        entry = snapshot[distribution]
        if not isinstance(entry, Mapping) or not isinstance(entry.get("tools"), Mapping):
            continue  # not the documented shape: nothing recorded to compare
        recorded, installed = entry.get("version"), version_of(distribution)
        if installed is None:
            messages.append(f"plugin {distribution} {recorded} was recorded at compile time "
                            "but is not installed")
        elif installed != recorded:
            messages.append(f"plugin {distribution} is {installed}, the manifest was compiled "
                            f"against {recorded}")
        for code in sorted(entry.get("codes") or {}):
            if registry.get(code) is None:
                messages.append(f"plugin {distribution}: code {code!r} is no longer registered")
        for name in sorted(entry.get("tools") or {}):
            tool = entry["tools"][name]
            live = live_tools.get(name)
            if live is None:
                messages.append(f"plugin {distribution}: tool {name!r} is no longer "
                                "registered")
                continue
            descriptor = describe_tool(live)
            if descriptor.description != tool.get("description"):
                messages.append(f"plugin {distribution}: the description of tool {name!r} "
                                "changed since compile time")
            changed = changed_paths(thaw(tool.get("input_schema")), descriptor.input_schema)
            if changed:
                messages.append(f"plugin {distribution}: the input schema of tool {name!r} "
                                f"changed since compile time ({', '.join(changed)})")
    return messages


def log_plugin_drift(snapshot: Mapping[str, Any], registry: ToolRegistry) -> list[str]:
    """Log every drift message at WARNING (boot calls this once); returns them."""
    messages = plugin_drift(snapshot, registry)
    for message in messages:
        logger.warning("plugin drift: %s (overrides and docs were checked against the "
                       "recorded version)", message)
    return messages


def changed_paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted paths where two JSON values differ (at most a few, then ``…``)."""
    found: list[str] = []
    _collect(old, new, prefix, found)
    if len(found) > MAX_SCHEMA_PATHS:
        return [*found[:MAX_SCHEMA_PATHS], "…"]
    return found


def _collect(old: Any, new: Any, prefix: str, found: list[str]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(old.keys() | new.keys(), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                found.append(path)
            else:
                _collect(old[key], new[key], path, found)
    elif old != new or type(old) is not type(new):
        found.append(prefix or "(whole schema)")
