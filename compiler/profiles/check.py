"""``kind: Profile`` documents -> manifest profile entries, with located errors.

Codes and globs are expanded against the tree's capability codes here, once, so the
manifest and every later reader (loader, budget, diff) see exact codes. Each problem
points at the node that causes it: an unknown code or a glob that matches nothing at its
list item, a second profile of a name at its ``name``. A profile's ``namespaces`` group
its deferred codes; what needs the tools' names (a namespace named like a tool) is
checked beside the budget, in ``compiler.profiles.namespaces``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from compiler.diagnostics import Code, Diagnostic
from compiler.profiles.globs import expand, is_glob
from compiler.runtime.manifest.model import SourceLocation
from compiler.runtime.manifest.profile_entries import NamespaceEntry, ProfileBudget, ProfileEntry
from compiler.source.documents import SourceDocument

# did-you-mean is a courtesy: past this many unknown selectors in one tree it is left out,
# so a tree with thousands of typos still checks in time linear in its size.
SUGGESTION_LIMIT = 20

PROFILE_DEFERRED_OUTSIDE = Code(
    "profile-deferred-outside", "a deferred code or glob matches none of the profile's codes")
PROFILE_DUPLICATE_NAME = Code("profile-duplicate-name", "two profiles have the same name")
PROFILE_EMPTY_GLOB = Code("profile-empty-glob", "a glob matches no capability")
PROFILE_NAMESPACE_NAME = Code(
    "profile-namespace-name", "two namespaces of a profile have the same name")
PROFILE_NAMESPACE_OUTSIDE = Code(
    "profile-namespace-outside", "a namespace's code or glob matches none of the deferred codes")
PROFILE_NAMESPACE_OVERLAP = Code(
    "profile-namespace-overlap", "a deferred code is in two namespaces of a profile")
PROFILE_UNKNOWN_CODE = Code("profile-unknown-code", "a listed code is not a capability of the tree")
CODES = (
    PROFILE_DEFERRED_OUTSIDE, PROFILE_DUPLICATE_NAME, PROFILE_EMPTY_GLOB,
    PROFILE_NAMESPACE_NAME, PROFILE_NAMESPACE_OUTSIDE, PROFILE_NAMESPACE_OVERLAP,
    PROFILE_UNKNOWN_CODE,
)


def check_profiles(
    documents: list[SourceDocument], codes: Iterable[str]
) -> tuple[tuple[ProfileEntry, ...], list[Diagnostic]]:
    """The profile entries of valid ``documents`` and every problem found, located."""
    known = sorted(set(codes))
    found: list[Diagnostic] = []
    entries: list[ProfileEntry] = []
    seen: dict[str, SourceDocument] = {}
    suggestions = [SUGGESTION_LIMIT]
    for document in documents:
        data = document.data
        name = data["name"]
        first = seen.get(name)
        if first is not None:
            found.append(Diagnostic.error(
                document.location(("name",)), PROFILE_DUPLICATE_NAME,
                f"profile {name!r} is already defined at {first.path}:{first.first_line}"))
            continue
        seen[name] = document
        selected, problems = _selected(document, ("capabilities",), known, suggestions)
        found += problems
        deferred, problems = _selected(document, ("deferred",), selected, suggestions,
                                       within_profile=True)
        found += problems
        deferred_codes = set(deferred)
        deferred = [code for code in selected if code in deferred_codes]
        namespaces, problems = _namespaces(document, deferred, suggestions)
        found += problems
        budget = data.get("budget") or {}
        entries.append(ProfileEntry(
            name=name, description=data.get("description"), capabilities=tuple(selected),
            deferred=tuple(deferred),
            budget=ProfileBudget(budget.get("tokens"), budget.get("tools")),
            source=SourceLocation(document.path, document.first_line),
            namespaces=namespaces))
    return tuple(entries), found


def _namespaces(document: SourceDocument, deferred: list[str], suggestions: list[int]
                ) -> tuple[tuple[NamespaceEntry, ...], list[Diagnostic]]:
    """The profile's namespaces over its deferred codes: each name once, each code in one."""
    found: list[Diagnostic] = []
    namespaces: list[NamespaceEntry] = []
    owner: dict[str, str] = {}
    for index, raw in enumerate(document.data.get("namespaces") or []):
        name = raw["name"]
        if any(namespace.name == name for namespace in namespaces):
            found.append(Diagnostic.error(
                document.location(("namespaces", index, "name")), PROFILE_NAMESPACE_NAME,
                f"namespace {name!r} is declared twice in profile {document.data['name']!r}"))
            continue
        path = ("namespaces", index, "capabilities")
        codes, problems = _selected(document, path, deferred, suggestions, within_profile=True)
        found += problems
        kept = []
        for code in codes:
            if code in owner:
                found.append(Diagnostic.error(
                    document.location(path), PROFILE_NAMESPACE_OVERLAP,
                    f"{code!r} is already in namespace {owner[code]!r}: a function belongs to "
                    "one namespace"))
                continue
            owner[code] = name
            kept.append(code)
        namespaces.append(NamespaceEntry(name, raw["description"], tuple(kept)))
    return tuple(namespaces), found


def _selected(document: SourceDocument, path: tuple[str | int, ...], known: list[str],
              suggestions: list[int], *, within_profile: bool = False
              ) -> tuple[list[str], list[Diagnostic]]:
    """The codes the selectors at ``path`` match, each once, in the order written."""
    node: Any = document.data
    for key in path:  # the schema held the shape: only the last key may be absent
        node = node.get(key) if isinstance(key, str) else node[key]
    selectors = list(node or [])
    expanded = expand(selectors, known)
    found: list[Diagnostic] = []
    chosen: dict[str, None] = {}
    for index, selector in enumerate(selectors):
        matched = expanded[selector]
        if not matched:
            found.append(_unmatched(document, (*path, index), selector, known, suggestions,
                                    within_profile))
        chosen.update(dict.fromkeys(matched))
    return list(chosen), found


def _unmatched(document: SourceDocument, path: tuple[str | int, ...], selector: str,
               known: list[str], suggestions: list[int], within_profile: bool) -> Diagnostic:
    where = document.location(path)
    if path[0] == "namespaces":
        return Diagnostic.error(where, PROFILE_NAMESPACE_OUTSIDE,
                                f"namespace code {selector!r} matches none of this profile's "
                                "deferred capabilities: a namespace groups deferred tools; "
                                "list it under deferred too")
    if within_profile:
        return Diagnostic.error(where, PROFILE_DEFERRED_OUTSIDE,
                                f"deferred {selector!r} matches none of this profile's "
                                "capabilities: list it under capabilities too")
    if is_glob(selector):
        return Diagnostic.error(where, PROFILE_EMPTY_GLOB,
                                f"glob {selector!r} matches no capability of the tree")
    hint = ""
    if suggestions[0] > 0:
        suggestions[0] -= 1
        close = difflib.get_close_matches(selector, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
    return Diagnostic.error(where, PROFILE_UNKNOWN_CODE,
                            f"unknown capability code {selector!r}{hint}")
