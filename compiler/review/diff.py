"""``capc diff``: what changed between two manifests, security-relevant changes first.

Pure functions: :func:`diff_manifests` compares two manifests as entries of the manifest
model (``compiler.runtime.manifest.model``), whose parse fills in the defaults (so a
manifest that spells a default and one that omits it do not differ), after dropping what
is bookkeeping, not behaviour (source lines, provenance, the digest). Renderers for text,
Markdown and JSON live in :mod:`compiler.review.diff_report`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from compiler.manifest import manifest_model
from compiler.review.changes import (
    ABSENT,
    SECURITY_RANKS,
    EntryChange,
    FieldChange,
    ManifestDiff,
    SecurityFinding,
    ToolChanges,
)
from compiler.review.output_fields import contract_changes
from compiler.review.pin_diff import pin_entry_changes, pin_findings
from compiler.review.ranking import (
    Rank,
    endpoint_changes,
    header_changes,
    rank_change,
    scheme_host,
    setting_changes,
)
from compiler.review.schema_widening import schema_widenings
from compiler.review.widening import (
    allowed_tools_widening,
    approval_relaxation,
    condition_loosening,
)
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import CapabilityEntry, ManifestModel


def normalise_capability(capability: CapabilityEntry) -> dict[str, Any]:
    """A capability's JSON with bookkeeping (code, source, provenance, lines) dropped."""
    normal = capability.to_json()
    del normal["code"], normal["source"]
    normal.get("mcp", {}).pop("pins", None)  # reported per server: compiler.review.pin_diff
    tool = normal.get("tool")
    if tool is not None:
        del tool["provenance"]
        tool["overrides"] = [{"path": o["path"], "fields": o["fields"]}
                             for o in tool["overrides"]]
    return normal


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves by dotted path; lists and empty mappings are leaves, compared whole."""
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key in value:
            flat.update(flatten(value[key], f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def field_changes(old: Any, new: Any) -> tuple[FieldChange, ...]:
    """The leaves that differ between two values, sorted by path."""
    old_flat, new_flat = flatten(old), flatten(new)
    changes = []
    covered: set[str] = set()
    for path in sorted(old_flat.keys() | new_flat.keys()):
        if path in covered:
            continue
        before, after = old_flat.get(path, ABSENT), new_flat.get(path, ABSENT)
        # A value that changed shape (a scalar or {} on one side, a mapping with leaves on
        # the other) is one change of the whole value, not a removal plus additions.
        for side, flat in (("after", new_flat), ("before", old_flat)):
            subtree = _subtree(flat, path)
            if subtree and (after if side == "after" else before) is ABSENT:
                covered.update(f"{path}.{key}" for key in subtree)
                if side == "after":
                    after = subtree
                else:
                    before = subtree
        if before != after or (type(before) is not type(after) and _strict_types(before, after)):
            changes.append(FieldChange(path, before, after))
    return tuple(changes)


def _subtree(flat: Mapping[str, Any], path: str) -> dict[str, Any]:
    prefix = path + "."
    return {key[len(prefix):]: value for key, value in flat.items() if key.startswith(prefix)}


def _strict_types(before: Any, after: Any) -> bool:
    # True == 1 in Python, but `required: 1` and `required: true` are different YAML.
    return isinstance(before, bool) or isinstance(after, bool)


def _by_code(manifest: ManifestModel) -> dict[str, CapabilityEntry]:
    return {entry.code: entry for entry in manifest.capabilities}


def _tool_name(capability: CapabilityEntry) -> str | None:
    return capability.tool.original_name if capability.tool is not None else None


def _overrides_by_tool(manifest: ManifestModel) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for pending in manifest.overrides:
        grouped.setdefault(pending.tool, []).append(thaw(pending.patch))
    return grouped


def _label(capability: CapabilityEntry) -> str:
    tool = _tool_name(capability)
    # A server accepted without a pin says why, on every line that shows it (SPEC §14).
    unpinned = capability.mcp.unpinned if capability.mcp is not None else None
    return (capability.type + (f", tool {tool}" if tool else "")
            + (f", unpinned: {unpinned}" if unpinned else ""))


def _keyed_changes(
    kind: str, old: Mapping[str, Any], new: Mapping[str, Any], labels: Mapping[str, str]
) -> list[EntryChange]:
    entries = []
    for key in sorted(old.keys() | new.keys()):
        label = labels.get(key, "")
        if key not in old:
            entries.append(EntryChange(kind, key, "added", label))
        elif key not in new:
            entries.append(EntryChange(kind, key, "removed", label))
        else:
            changes = field_changes(old[key], new[key])
            if changes:
                entries.append(EntryChange(kind, key, "changed", label, changes))
    return entries


def diff_manifests(old: ManifestModel | Mapping[str, Any],
                   new: ManifestModel | Mapping[str, Any]) -> ManifestDiff:
    """Compare two manifests (models, or verified documents, read as models): entries
    added, removed and changed, and security findings."""
    old, new = manifest_model(old), manifest_model(new)
    old_caps, new_caps = _by_code(old), _by_code(new)
    old_normal = {code: normalise_capability(c) for code, c in old_caps.items()}
    new_normal = {code: normalise_capability(c) for code, c in new_caps.items()}
    labels = {code: _label(c) for code, c in {**old_caps, **new_caps}.items()}
    entries = _keyed_changes("capability", old_normal, new_normal, labels)
    entries += _keyed_changes(
        "override", _overrides_by_tool(old), _overrides_by_tool(new), {}
    )
    old_plugins, new_plugins = thaw(old.plugins), thaw(new.plugins)
    entries += _keyed_changes("plugin", old_plugins, new_plugins,
                              _plugin_labels(old_plugins, new_plugins))
    from compiler.review.profile_diff import profile_entry_changes, profile_findings

    entries += pin_entry_changes(old, new)
    entries += profile_entry_changes(old, new)
    entries += _keyed_changes("tool-test", _tool_test_cases(old), _tool_test_cases(new), {})
    tools = _tool_changes(old_caps, new_caps, old_normal, new_normal)
    findings = [*security_findings(old, new), *pin_findings(old, new),
                *profile_findings(old, new)]
    return ManifestDiff(
        tuple(entries),
        _with_plugin_tools(tools, _plugin_tools(old_plugins), _plugin_tools(new_plugins)),
        tuple(sorted(findings, key=lambda f: (f.rank, f.entry, f.message))),
    )


def _tool_test_cases(manifest: ManifestModel) -> dict[str, Any]:
    """``CODE/CASE`` -> the case's digest (SPEC §17): added, removed and changed cases."""
    return {f"{code}/{name}": {"digest": digest}
            for code, cases in manifest.tool_tests.items() for name, digest in cases.items()}


def _tool_changes(
    old_caps: Mapping[str, CapabilityEntry],
    new_caps: Mapping[str, CapabilityEntry],
    old_normal: Mapping[str, Mapping[str, Any]],
    new_normal: Mapping[str, Mapping[str, Any]],
) -> ToolChanges:
    old_tools = {_tool_name(c): code for code, c in old_caps.items() if _tool_name(c)}
    new_tools = {_tool_name(c): code for code, c in new_caps.items() if _tool_name(c)}
    changed = []
    for name in sorted(old_tools.keys() & new_tools.keys(), key=str):
        before, after = old_normal[old_tools[name]], new_normal[new_tools[name]]
        if before.get("tool") != after.get("tool") or before.get("api") != after.get("api"):
            changed.append(str(name))
    return ToolChanges(
        tuple(sorted(str(n) for n in new_tools.keys() - old_tools.keys())),
        tuple(sorted(str(n) for n in old_tools.keys() - new_tools.keys())),
        tuple(changed),
    )


def _plugin_labels(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """``version 0.1.0 → 0.2.0`` for an upgraded plugin distribution, else its version."""
    def version(plugins: Mapping[str, Any], name: str) -> Any:
        entry = plugins.get(name)
        return entry.get("version") if isinstance(entry, Mapping) else None

    labels = {}
    for name in old.keys() | new.keys():
        before, after = version(old, name), version(new, name)
        if before and after and before != after:
            labels[name] = f"version {before} → {after}"
        elif before or after:
            labels[name] = f"version {after or before}"
    return labels


def _plugin_tools(plugins: Mapping[str, Any]) -> dict[str, Any]:
    """Recorded plugin tool descriptors by name (the manifest's ``plugins[DIST].tools``)."""
    tools: dict[str, Any] = {}
    for name in sorted(plugins):
        entry = plugins[name]
        recorded = entry.get("tools") if isinstance(entry, Mapping) else None
        if isinstance(recorded, Mapping):
            for tool_name, tool in recorded.items():
                tools.setdefault(str(tool_name), tool)
    return tools


def _with_plugin_tools(
    tools: ToolChanges, old: Mapping[str, Any], new: Mapping[str, Any]
) -> ToolChanges:
    changed = [name for name in old.keys() & new.keys() if old[name] != new[name]]
    return ToolChanges(
        tuple(sorted({*tools.added, *(new.keys() - old.keys())})),
        tuple(sorted({*tools.removed, *(old.keys() - new.keys())})),
        tuple(sorted({*tools.changed, *changed})),
    )


def _endpoint(capability: CapabilityEntry | None) -> str | None:
    if capability is None:
        return None
    if capability.api is not None:
        return capability.api.url
    if capability.mcp is not None:
        return capability.mcp.server_url
    return None


def _finding(kind: str, code: str, message: str) -> SecurityFinding:
    return SecurityFinding(SECURITY_RANKS[kind], kind, code, message)


def security_findings(old: ManifestModel, new: ManifestModel) -> Iterable[SecurityFinding]:
    """Every security-relevant change from ``old`` to ``new``, unordered."""
    old_caps, new_caps = _by_code(old), _by_code(new)
    known_hosts = {
        endpoint[1] for c in old_caps.values() if (endpoint := scheme_host(_endpoint(c)))
    }
    for code, capability in new_caps.items():
        before = normalise_capability(old_caps[code]) if code in old_caps else {}
        after = normalise_capability(capability)
        yield from _ranked(code, endpoint_changes(_endpoint(old_caps.get(code)),
                                                  _endpoint(capability), known_hosts))
        kind = after.get("type")
        if kind == "mcp":
            yield from _mcp_findings(code, before.get("mcp"), after["mcp"])
        if kind == "api":
            yield from _api_findings(code, before.get("api") or {}, after["api"])
            if before.get("api"):  # a new capability's headers: its new-placeholder findings
                yield from _ranked(code, header_changes(before["api"].get("headers"),
                                                        after["api"].get("headers")))
            if before.get("tool") and after.get("tool"):
                for widened in schema_widenings(before["tool"]["input_schema"],
                                                after["tool"]["input_schema"]):
                    yield _finding("input-schema-widened", code,
                                   f"the model may send more: {widened}")
                for change in contract_changes(before["tool"].get("output_schema"),
                                               after["tool"].get("output_schema")):
                    yield _finding("output-contract-changed", code, change)
        yield from _ranked(code, setting_changes(before.get(str(kind)), after.get(str(kind))))
        if before:
            loosened = condition_loosening(before.get("when"), after.get("when"))
            if loosened:
                yield _finding("condition-loosened", code, loosened)
        if kind == "internal" and before.get("type") == "internal":
            gained = sorted(set(after["internal"]["codes"]) - set(before["internal"]["codes"]))
            if gained:
                yield _finding("internal-codes-widened", code,
                               f"now activates the tools of registry code(s) {gained}")


def _ranked(code: str, changes: Iterable[tuple[str, str]]) -> Iterable[SecurityFinding]:
    """The security-relevant ones of ``(kind, message)`` changes, as findings."""
    for kind, message in changes:
        if rank_change(kind) is Rank.SECURITY:
            yield _finding(kind, code, message)


def _mcp_findings(
    code: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> Iterable[SecurityFinding]:
    if before is None:
        return
    old_tools, new_tools = before.get("allowed_tools"), after.get("allowed_tools")
    widened = allowed_tools_widening(old_tools, new_tools)
    if widened is not None:
        kind = "allow-list-removed" if new_tools is None else "allowed-tools-widened"
        yield _finding(kind, code, widened)
    old_approval, new_approval = before.get("require_approval"), after.get("require_approval")
    relaxed = approval_relaxation(old_approval, new_approval)
    if relaxed is not None:
        yield _finding("approval-relaxed", code, relaxed)
    if before.get("extra") != after.get("extra"):  # passed to the provider as written
        yield _finding("mcp-options-changed", code,
                       f"provider options changed from {_json(before.get('extra'))} to "
                       f"{_json(after.get('extra'))}")


def _api_findings(
    code: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> Iterable[SecurityFinding]:
    def uploads(api: Mapping[str, Any]) -> set[str]:
        arguments = api.get("arguments") or {}
        return {name for name, a in arguments.items() if "file" in (a.get("bindings") or [])}

    for name in sorted(uploads(after) - uploads(before)):
        yield _finding("new-file-upload", code, f"uploads chat documents (argument {_json(name)})")
    if before and before.get("method") != after.get("method"):
        yield _finding("method-changed", code,
                       f"method changed from {before.get('method')} to {after.get('method')}")


def _json(value: Any) -> str:
    """A manifest value as the diff shows it: JSON text (``{}`` for nothing), not a repr."""
    return json.dumps({} if value is None else value, ensure_ascii=False, sort_keys=True,
                      default=str)


# The values a diff is made of are re-exported, so callers need one import.
__all__ = ["ABSENT", "SECURITY_RANKS", "EntryChange", "FieldChange", "ManifestDiff",
           "SecurityFinding", "ToolChanges", "diff_manifests", "field_changes", "flatten",
           "normalise_capability", "security_findings"]
