"""``kind: Profile`` documents -> manifest profile entries, with located errors.

Codes and globs are expanded against the tree's capability codes here, once, so the
manifest and every later reader (loader, budget, diff) see exact codes. Each problem
points at the node that causes it: an unknown code or a glob that matches nothing at its
list item, a second profile of a name at its ``name``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from compiler.diagnostics import Diagnostic
from compiler.profiles.globs import expand, is_glob
from compiler.runtime.manifest.model import SourceLocation
from compiler.runtime.manifest.profiles import ProfileBudget, ProfileEntry
from compiler.source.documents import SourceDocument

# did-you-mean is a courtesy: past this many unknown selectors in one tree it is left out,
# so a tree with thousands of typos still checks in time linear in its size.
SUGGESTION_LIMIT = 20

CODES = {
    "profile-duplicate-name": "two profiles have the same name",
    "profile-unknown-code": "a listed code is not a capability of the tree",
    "profile-empty-glob": "a glob matches no capability",
    "profile-deferred-outside": "a deferred code or glob matches none of the profile's codes",
}


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
                document.location(("name",)), "profile-duplicate-name",
                f"profile {name!r} is already defined at {first.path}:{first.first_line}"))
            continue
        seen[name] = document
        selected, problems = _selected(document, "capabilities", known, suggestions)
        found += problems
        deferred, problems = _selected(document, "deferred", selected, suggestions,
                                       within_profile=True)
        found += problems
        deferred_codes = set(deferred)
        budget = data.get("budget") or {}
        entries.append(ProfileEntry(
            name=name, description=data.get("description"), capabilities=tuple(selected),
            deferred=tuple(code for code in selected if code in deferred_codes),
            budget=ProfileBudget(budget.get("tokens"), budget.get("tools")),
            source=SourceLocation(document.path, document.first_line)))
    return tuple(entries), found


def _selected(document: SourceDocument, key: str, known: list[str], suggestions: list[int],
              *, within_profile: bool = False) -> tuple[list[str], list[Diagnostic]]:
    """The codes the selectors under ``key`` match, each once, in the order written."""
    selectors = list(document.data.get(key) or [])
    expanded = expand(selectors, known)
    found: list[Diagnostic] = []
    chosen: dict[str, None] = {}
    for index, selector in enumerate(selectors):
        matched = expanded[selector]
        if not matched:
            found.append(_unmatched(document, (key, index), selector, known, suggestions,
                                    within_profile))
        chosen.update(dict.fromkeys(matched))
    return list(chosen), found


def _unmatched(document: SourceDocument, path: tuple[str | int, ...], selector: str,
               known: list[str], suggestions: list[int], within_profile: bool) -> Diagnostic:
    where = document.location(path)
    if within_profile:
        return Diagnostic.error(where, "profile-deferred-outside",
                                f"deferred {selector!r} matches none of this profile's "
                                "capabilities: list it under capabilities too")
    if is_glob(selector):
        return Diagnostic.error(where, "profile-empty-glob",
                                f"glob {selector!r} matches no capability of the tree")
    hint = ""
    if suggestions[0] > 0:
        suggestions[0] -= 1
        close = difflib.get_close_matches(selector, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
    return Diagnostic.error(where, "profile-unknown-code",
                            f"unknown capability code {selector!r}{hint}")
