"""Tool names after every override: unique across api tools and plugin tools.

A ``namespace`` relabel changes a tool's final name. Were two tools to end up with one
name, the loader would keep one of them at boot and silently drop the other, possibly
the trusted one, so the collision is an error at the override that caused it (or, when
no override is involved, at the api tool that takes a plugin tool's name).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.runtime.descriptors import relabel_namespace
from compiler.runtime.manifest.model import ApiToolEntry
from compiler.runtime.records import record
from compiler.source.documents import SourceDocument

DUPLICATE_FINAL_TOOL_NAME = Code(
    "duplicate-final-tool-name", "two tools end up with the same name after overrides")
CODES = (DUPLICATE_FINAL_TOOL_NAME,)


def _last_relabel(documents: Iterable[SourceDocument]) -> SourceDocument | None:
    """The last of one tool's overrides that sets a namespace."""
    chosen = None
    for document in documents:
        if "namespace" in document.data:
            chosen = document
    return chosen


@record(frozen=True, slots=True)
class _FinalName:
    """One tool's final name, what it is, and where the name was given."""

    name: str
    label: str
    location: Location
    relabelled: bool


def _final_name(name: str, original: str, relabel: SourceDocument | None,
                tool: ApiToolEntry | None) -> _FinalName:
    """A claim located: at the override that relabelled it, else where the api tool's
    name was given (a plugin tool's own name has no place in the tree)."""
    if relabel is not None:
        where = relabel.location(("namespace",))
    else:
        given = tool.provenance.name if tool is not None else None
        where = Location(given.path, given.line) if given else Location("")
    label = f"api tool {original!r}" if tool is not None else f"plugin tool {original!r}"
    return _FinalName(name, label, where, relabel is not None)


def check_final_tool_names(
    overrides: list[SourceDocument],
    api_tools: Mapping[str, ApiToolEntry],
    plugin_tools: Collection[str],
) -> list[Diagnostic]:
    """A located error for every tool whose final name another tool also ends up with.

    ``api_tools`` are the api tools *after* the tree's overrides, by original name.
    """
    # The overrides of each tool, in order: one pass, not one per tool (linear in the tree).
    by_tool: dict[str, list[SourceDocument]] = {}
    for document in overrides:
        target = document.data.get("tool")
        if isinstance(target, str):
            by_tool.setdefault(target, []).append(document)
    # (final name, original name, the relabelling override, the api tool or None for a
    # plugin tool), located only when two tools end up with the name: a tree has
    # thousands of tools and most often no clash.
    claims: list[tuple[str, str, SourceDocument | None, ApiToolEntry | None]] = []
    for original, tool in api_tools.items():
        relabel = _last_relabel(by_tool.get(original, ())) if tool.name != original else None
        claims.append((tool.name, original, relabel, tool))
    claimed = {claim[0] for claim in claims}
    for original in sorted(set(plugin_tools) - set(api_tools)):
        name, relabel = original, None
        for document in by_tool.get(original, ()):
            if isinstance(document.data.get("namespace"), str):
                name, relabel = relabel_namespace(name, document.data["namespace"]), document
        if relabel is None and name not in claimed:
            continue  # untouched and unclaimed: nothing to locate
        claims.append((name, original, relabel, None))
        claimed.add(name)
    uses = Counter(claim[0] for claim in claims)
    finals = [_final_name(*claim) for claim in claims if uses[claim[0]] > 1]
    by_name: dict[str, list[_FinalName]] = {}
    for final in finals:
        by_name.setdefault(final.name, []).append(final)
    found: list[Diagnostic] = []
    for name, claimants in sorted(by_name.items()):
        if len(claimants) < 2:
            continue
        blamed = [c for c in claimants if c.relabelled] or \
                 [c for c in claimants if c.location.path][:1]
        for claimant in blamed:
            others = ", ".join(c.label for c in claimants if c is not claimant)
            found.append(Diagnostic.error(
                claimant.location, DUPLICATE_FINAL_TOOL_NAME,
                f"after overrides, {claimant.label} is named {name!r}, as is {others}: at "
                "boot one would silently replace the other; final tool names must be unique"))
    return found
