"""``capc diff`` for profiles: per profile, capabilities and tools added and removed, and
the change in up-front tokens per provider.

A profile that gains a capability gives an agent something new to call, so that is a
security-relevant finding; so is a new profile. Token figures need the o200k encoding
(``capc[budget]``); without it the tools still show and the token lines are left out.
Kept apart from :mod:`compiler.review.diff` so each reads on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compiler.profiles.budget import PROVIDERS, ProfileCost, profile_costs
from compiler.profiles.tokens import Counter, EncodingUnavailable, o200k
from compiler.review.changes import ABSENT, EntryChange, FieldChange, SecurityFinding
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import ManifestModel
from compiler.runtime.manifest.profile_entries import ProfileEntry

PROFILE_RANKS = {"profile-gains-capability": 5, "new-profile": 6}


def _counter() -> Counter | None:
    try:
        return o200k()
    except EncodingUnavailable:
        return None


def _costs(manifest: ManifestModel, count: Counter | None) -> dict[str, ProfileCost]:
    costs = profile_costs(manifest.profiles, manifest.capabilities, thaw(manifest.plugins),
                          count, manifest.overrides)
    return {cost.profile.name: cost for cost in costs}


def _tools(cost: ProfileCost | None) -> set[str]:
    return {tool.name for tool in cost.on("openai").tools} if cost is not None else set()


def profile_entry_changes(old: ManifestModel, new: ManifestModel) -> list[EntryChange]:
    """One ``profile`` entry per profile added, removed or changed."""
    before = {profile.name: profile for profile in old.profiles}
    after = {profile.name: profile for profile in new.profiles}
    if not before and not after:
        return []
    count = _counter()
    old_costs, new_costs = _costs(old, count), _costs(new, count)
    entries = []
    for name in sorted(before.keys() | after.keys()):
        fields = list(_profile_fields(before.get(name), after.get(name)))
        fields += _tool_fields(old_costs.get(name), new_costs.get(name))
        if count is not None:
            fields += _token_fields(old_costs.get(name), new_costs.get(name))
        if name not in before or name not in after:
            status = "added" if name not in before else "removed"
        elif fields:
            status = "changed"
        else:
            continue
        entries.append(EntryChange("profile", name, status, "profile", tuple(fields)))
    return entries


def _profile_fields(before: ProfileEntry | None,
                    after: ProfileEntry | None) -> Iterable[FieldChange]:
    old_codes = set(before.capabilities) if before else set()
    new_codes = set(after.capabilities) if after else set()
    for code in sorted(new_codes - old_codes):
        yield FieldChange(f"capabilities.{code}", ABSENT, "granted")
    for code in sorted(old_codes - new_codes):
        yield FieldChange(f"capabilities.{code}", "granted", ABSENT)
    old_deferred = set(before.deferred) if before else set()
    new_deferred = set(after.deferred) if after else set()
    for code in sorted((old_deferred ^ new_deferred) & old_codes & new_codes):
        yield FieldChange(f"deferred.{code}", code in old_deferred, code in new_deferred)
    old_budget = before.budget.to_json() if before else {}
    new_budget = after.budget.to_json() if after else {}
    for key in sorted(old_budget.keys() | new_budget.keys()):
        if old_budget.get(key) != new_budget.get(key):
            yield FieldChange(f"budget.{key}", old_budget.get(key, ABSENT),
                              new_budget.get(key, ABSENT))


def _tool_fields(before: ProfileCost | None,
                 after: ProfileCost | None) -> list[FieldChange]:
    old_tools, new_tools = _tools(before), _tools(after)
    return ([FieldChange(f"tools.{name}", ABSENT, "offered")
             for name in sorted(new_tools - old_tools)]
            + [FieldChange(f"tools.{name}", "offered", ABSENT)
               for name in sorted(old_tools - new_tools)])


def _token_fields(before: ProfileCost | None,
                  after: ProfileCost | None) -> list[FieldChange]:
    fields = []
    for provider in PROVIDERS:
        old_tokens = _tokens(before, provider)
        new_tokens = _tokens(after, provider)
        if old_tokens != new_tokens:
            fields.append(FieldChange(f"tokens_up_front.{provider}", old_tokens, new_tokens))
    return fields


def _tokens(cost: ProfileCost | None, provider: str) -> Any:
    if cost is None:
        return ABSENT
    on = cost.on(provider)
    shown = on.upfront_tokens if on.complete else f">={on.upfront_tokens}"
    return f"~{shown}" if on.estimate else shown


def profile_findings(old: ManifestModel, new: ManifestModel) -> Iterable[SecurityFinding]:
    """A profile that gains a capability, and a new profile, are security-relevant."""
    before = {profile.name: profile for profile in old.profiles}
    for profile in new.profiles:
        previous = before.get(profile.name)
        if previous is None:
            yield SecurityFinding(
                PROFILE_RANKS["new-profile"], "new-profile", profile.name,
                f"new profile gets {len(profile.capabilities)} capabilities: "
                + ", ".join(profile.capabilities[:20])
                + (" …" if len(profile.capabilities) > 20 else ""))
            continue
        gained = [code for code in profile.capabilities if code not in previous.capabilities]
        for code in gained:
            yield SecurityFinding(
                PROFILE_RANKS["profile-gains-capability"], "profile-gains-capability",
                profile.name, f"now gets capability {code!r}")
