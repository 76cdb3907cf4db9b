"""Compile-time limits of each profile: its budget and the providers' request limits.

Every error names what to do: the biggest up-front tools and what deferring them would
save, the capabilities that share a tool name. Figures the compiler cannot know (an
unpinned server) are warnings that say so; they never count as zero tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.profiles.budget import (
    OPENAI_TOOL_LIMIT,
    ProfileCost,
    ToolCost,
    profile_costs,
)
from compiler.profiles.tokens import Counter, EncodingUnavailable, o200k, utf8_upper_bound
from compiler.runtime.loading_policy import SEARCH_TOOL_NAMES
from compiler.runtime.manifest.model import CapabilityEntry, PendingOverride
from compiler.runtime.manifest.profile_entries import ProfileEntry
from compiler.source.documents import SourceDocument

# Tools named in one message: enough to act on, bounded for a profile of thousands.
SHOWN = 10
# Rounds of "defer more, cost the profile again" before advice stops: each round defers
# one capability or more, and each costing is linear in the profile's tools.
ROUNDS = 4

# The cost of a profile as compile counts it (the same tools, plugins, overrides, counter).
Reprice = Callable[[ProfileEntry], ProfileCost]

PROFILE_COST_UNKNOWN = Code(
    "profile-cost-unknown", "part of a profile's cost cannot be known at compile time",
    Severity.WARNING)
PROFILE_DUPLICATE_TOOL = Code(
    "profile-duplicate-tool", "two capabilities of a profile have a tool of the same name")
PROFILE_NO_TOKENIZER = Code(
    "profile-no-tokenizer", "a token budget cannot be checked without the o200k encoding")
PROFILE_OVER_BUDGET = Code(
    "profile-over-budget", "a profile sends more tokens or tools up front than its budget")
PROFILE_PROVIDER_LIMIT = Code(
    "profile-provider-limit", "a profile sends more tools than a provider accepts (OpenAI: 128)")
PROFILE_SEARCH_TOOL_NAME = Code(
    "profile-search-tool-name", "a deferring profile has a tool named like the search tool")
PROFILE_UNCOUNTABLE_TOOL = Code(
    "profile-uncountable-tool", "a tool's definition is too large or deep to count")
CODES = (
    PROFILE_COST_UNKNOWN, PROFILE_DUPLICATE_TOOL, PROFILE_NO_TOKENIZER, PROFILE_OVER_BUDGET,
    PROFILE_PROVIDER_LIMIT, PROFILE_SEARCH_TOOL_NAME, PROFILE_UNCOUNTABLE_TOOL,
)


def check_profile_budgets(documents: Iterable[SourceDocument], profiles: Iterable[ProfileEntry],
                          entries: Iterable[CapabilityEntry], plugins: Mapping[str, Any],
                          overrides: Iterable[PendingOverride] = ()) -> list[Diagnostic]:
    """Located problems of every profile's budget and provider limits (``overrides``: the
    pending overrides the manifest will carry, applied to plugin tools as at boot)."""
    by_name = {document.data["name"]: document for document in documents}
    profiles, entries, overrides = list(profiles), list(entries), list(overrides)
    found: list[Diagnostic] = []
    count: Counter | None = None
    if any(profile.budget.tokens is not None for profile in profiles):
        # A token is at least one byte: when every budget holds even at a token per byte,
        # the exact count cannot change the verdict, and the encoding is not loaded.
        bounds = profile_costs(profiles, entries, plugins, utf8_upper_bound, overrides)
        bound_reprice = _repricer(entries, plugins, utf8_upper_bound, overrides)
        doubtful = {cost.profile.name for cost in bounds if _may_exceed(cost)}
        if not doubtful:
            return [problem for cost in bounds
                    for problem in _problems(by_name[cost.profile.name], cost, True,
                                             bound_reprice)]
        try:
            count = o200k()
        except EncodingUnavailable as error:
            # Never a pass on a bound that proves nothing: each budget in doubt is an
            # error saying what is known; the other limits are checked as usual.
            for cost in bounds:
                document = by_name[cost.profile.name]
                proven = cost.profile.name not in doubtful  # its bound is a valid check
                found += _problems(document, cost, proven, bound_reprice)
                if not proven:
                    found.append(_no_tokenizer(document, cost, error))
            return found
    reprice = _repricer(entries, plugins, count, overrides)
    for cost in profile_costs(profiles, entries, plugins, count, overrides):
        found += _problems(by_name[cost.profile.name], cost, count is not None, reprice)
    return found


def _repricer(entries: Sequence[CapabilityEntry], plugins: Mapping[str, Any],
              count: Counter | None, overrides: Sequence[PendingOverride]) -> Reprice:
    """Costs one profile as the check does: advice is checked by applying it."""
    def reprice(profile: ProfileEntry) -> ProfileCost:
        return profile_costs([profile], entries, plugins, count, overrides)[0]
    return reprice


def _no_tokenizer(document: SourceDocument, cost: ProfileCost,
                  error: EncodingUnavailable) -> Diagnostic:
    budget = cost.profile.budget.tokens
    bound = max(cost.providers, key=lambda on: on.upfront_tokens)
    return Diagnostic.error(
        _at(document, ("budget", "tokens")), PROFILE_NO_TOKENIZER,
        f"profile {cost.profile.name!r}: its budget of {budget} tokens cannot be checked: "
        f"{error}; without it the up-front tokens to {bound.provider} are only known to be "
        f"at most {bound.upfront_tokens} (a token is at least one byte)")


def _may_exceed(cost: ProfileCost) -> bool:
    budget = cost.profile.budget.tokens
    return budget is not None and any(on.upfront_tokens > budget for on in cost.providers)


def _problems(document: SourceDocument, cost: ProfileCost, counted: bool,
              reprice: Reprice) -> list[Diagnostic]:
    profile = cost.profile
    found = [Diagnostic.error(
        _at(document, ("capabilities",)), PROFILE_DUPLICATE_TOOL,
        f"profile {profile.name!r}: capabilities {', '.join(codes)} all offer a tool named "
        f"{name!r}; providers need unique names: keep one or rename with a ToolOverride")
        for name, codes in cost.duplicates]
    openai = cost.on("openai")
    if profile.deferred:
        clashing = sorted({tool.name for tool in openai.tools} & SEARCH_TOOL_NAMES)
        found += [Diagnostic.error(_at(document, ("deferred",)), PROFILE_SEARCH_TOOL_NAME,
                                   f"profile {profile.name!r} defers tools, so the provider's "
                                   f"search tool is added, and tool {name!r} has its name")
                  for name in clashing]
    # Namespaces are entries of the request's tools too (docs/profiles.md).
    upfront = cost.upfront_entries("openai")
    at_least = "" if cost.entries_complete("openai") else "at least "
    if upfront > OPENAI_TOOL_LIMIT:
        found.append(Diagnostic.error(
            _at(document, ("capabilities",)), PROFILE_PROVIDER_LIMIT,
            f"profile {profile.name!r} sends {at_least}{upfront} tools up front; an OpenAI "
            "request takes "
            f"at most {OPENAI_TOOL_LIMIT}: defer or trim "
            f"{_advice(cost, OPENAI_TOOL_LIMIT, reprice)}"))
    limit = profile.budget.tools
    if limit is not None and upfront > limit:
        found.append(Diagnostic.error(
            _at(document, ("budget", "tools")), PROFILE_OVER_BUDGET,
            f"profile {profile.name!r} sends {at_least}{upfront} tools up front, over its "
            "budget of "
            f"{limit}: defer or trim {_advice(cost, limit, reprice)}"))
    unknown = {item.code: item.reason for item in openai.unknown}
    for code, reason in sorted(unknown.items()):
        found.append(Diagnostic.warning(_at(document, ("capabilities",)), PROFILE_COST_UNKNOWN,
                                        f"profile {profile.name!r}: {code}: {reason}"))
    if profile.budget.tokens is not None and counted:
        found += _token_problems(document, cost, reprice)
    return found


def _token_problems(document: SourceDocument, cost: ProfileCost,
                    reprice: Reprice) -> list[Diagnostic]:
    profile = cost.profile
    budget = profile.budget.tokens
    assert budget is not None
    found: list[Diagnostic] = []
    uncountable = {tool.name: tool.problem for tool in cost.on("openai").upfront
                   if tool.tokens is None}
    for name, problem in sorted(uncountable.items()):
        found.append(Diagnostic.error(
            _at(document, ("budget", "tokens")), PROFILE_UNCOUNTABLE_TOOL,
            f"profile {profile.name!r}: tool {name!r} cannot be counted ({problem}): "
            "defer it or trim its schema"))
    for provider in cost.providers:
        total = provider.upfront_tokens
        if total <= budget:
            continue
        estimate = " (an estimate)" if provider.estimate else ""
        bound = "at least " if not provider.complete else ""
        fixed = (f" (the request's fixed part alone is {provider.overhead})"
                 if provider.overhead > budget else "")
        found.append(Diagnostic.error(
            _at(document, ("budget", "tokens")), PROFILE_OVER_BUDGET,
            f"profile {profile.name!r} sends {bound}{total} tokens of tool definitions up "
            f"front to {provider.provider}{estimate}, over its budget of {budget}{fixed}: "
            f"defer or trim {_token_advice(cost, provider.provider, budget, reprice)}"))
    return found


@dataclass(frozen=True, slots=True)
class _Plan:
    """Capabilities to defer (with their up-front tools), the profile's cost once they are
    deferred, and whether no capability was left to add."""

    chosen: tuple[tuple[str, tuple[ToolCost, ...]], ...]
    after: ProfileCost
    exhausted: bool

    @property
    def tools(self) -> list[ToolCost]:
        """The up-front tools the plan defers, biggest capability first."""
        return [tool for _, tools in self.chosen for tool in tools]


def _plan(cost: ProfileCost, provider: str, gain: Callable[[Sequence[ToolCost]], int],
          need: int, over: Callable[[ProfileCost], int], reprice: Reprice) -> _Plan:
    """Defer capabilities, biggest up-front tool first, until the profile costed again with
    them deferred is within its limit (``over`` <= 0). ``gain`` estimates what deferring a
    capability's tools frees; ``need``: the excess plus what the search tool adds when the
    profile defers nothing yet. The estimate only picks; the costing decides, so the advice
    holds whatever deferring adds (the search tool, OpenAI's namespaces and kept lines)."""
    on = cost.on(provider)
    grouped: dict[str, list[ToolCost]] = {}
    counted = on.biggest(len(on.upfront))
    for tool in [*counted, *(tool for tool in on.upfront if tool.tokens is None)]:
        grouped.setdefault(tool.code, []).append(tool)
    candidates = [(code, tuple(tools)) for code, tools in grouped.items()]
    taken = 0  # candidates[:taken] are chosen
    after, shortfall = cost, need
    for _ in range(ROUNDS):
        gained = 0
        while taken < len(candidates) and (gained < shortfall or not taken):
            gained += gain(candidates[taken][1])
            taken += 1
        deferred = set(cost.profile.deferred) | {code for code, _ in candidates[:taken]}
        after = reprice(replace(cost.profile, deferred=tuple(
            code for code in cost.profile.capabilities if code in deferred)))
        shortfall = over(after)
        if shortfall <= 0 or taken == len(candidates):
            break
    return _Plan(tuple(candidates[:taken]), after,
                 taken == len(candidates) and over(after) > 0)


def _names(tools: Sequence[ToolCost], shown: Callable[[ToolCost], str]) -> str:
    more = f" and {len(tools) - SHOWN} more" if len(tools) > SHOWN else ""
    return ", ".join(shown(tool) for tool in tools[:SHOWN]) + more


def _advice(cost: ProfileCost, limit: int, reprice: Reprice) -> str:
    """The biggest up-front tools, enough of them that deferring them brings the OpenAI
    request to ``limit`` entries (the search tool a first deferral adds included)."""
    excess = cost.upfront_entries("openai") - limit
    need = excess + (0 if cost.profile.deferred else 1)
    plan = _plan(cost, "openai", len, need, lambda after: after.upfront_entries("openai") - limit,
                 reprice)
    names = _names(plan.tools, lambda tool: tool.name if tool.name == tool.code
                   else f"{tool.name} ({tool.code})") or "some capabilities"
    left = plan.after.upfront_entries("openai") - limit
    if left <= 0:
        return names
    why = ("deferring cannot meet this limit (the search tool and namespaces stay up front): "
           "trim capabilities or raise it" if plan.exhausted else "defer more as well")
    return f"{names}; {left} over even then: {why}"


def _token_advice(cost: ProfileCost, provider: str, budget: int, reprice: Reprice) -> str:
    """The biggest up-front tools until deferring them brings ``provider``'s up-front
    tokens within ``budget``; what that saves, measured by costing the profile again."""
    on = cost.on(provider)
    need = on.upfront_tokens - budget + (0 if cost.profile.deferred else on.search)
    plan = _plan(cost, provider, lambda tools: sum(tool.saving for tool in tools), need,
                 lambda after: after.on(provider).upfront_tokens - budget, reprice)
    saved = on.upfront_tokens - plan.after.on(provider).upfront_tokens
    left = plan.after.on(provider).upfront_tokens - budget
    names = _names(plan.tools, lambda tool: f"{tool.name} "
                   f"({'uncounted' if tool.tokens is None else tool.tokens})")
    hint = _namespace_hint(cost, provider, plan)
    if left <= 0:
        return f"{names}; deferring them saves {saved} tokens{hint}"
    why = ("deferring cannot meet this budget, trim descriptions or raise it" if plan.exhausted
           else "defer more as well")
    return f"{names}; deferring them saves {saved} tokens, {left} short: {why}{hint}"


def _namespace_hint(cost: ProfileCost, provider: str, plan: _Plan) -> str:
    """On OpenAI, a deferred function outside a namespace keeps its name and description up
    front; when several would, say that a profile namespace shows one line for them all."""
    kept = [tool for tool in plan.tools if tool.kept]
    grouped = {code for namespace in cost.profile.namespaces for code in namespace.capabilities}
    kept = [tool for tool in kept if tool.code not in grouped]
    if provider != "openai" or len(kept) < 2:
        return ""
    return (f"; on OpenAI each deferred function outside a namespace still shows its name and "
            f"description up front ({sum(tool.kept for tool in kept)} tokens for these): group "
            "their capabilities in one of the profile's namespaces (SPEC §12, docs/profiles.md "
            "Namespaces) to show one line instead")


def _at(document: SourceDocument, path: tuple[str, ...]) -> Location:
    """The node at ``path`` when the document has it, else the document itself."""
    node: Any = document.data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return document.location()
        node = node[key]
    return document.location(path)
