"""Compile-time limits of each profile: its budget and the providers' request limits.

Every error names what to do: the biggest up-front tools and what deferring them would
save, the capabilities that share a tool name. Figures the compiler cannot know (an
unpinned server) are warnings that say so; they never count as zero tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler.diagnostics import Diagnostic, Location
from compiler.profiles.budget import (
    OPENAI_TOOL_LIMIT,
    ProfileCost,
    ProviderCost,
    ToolCost,
    profile_costs,
)
from compiler.profiles.tokens import Counter, EncodingUnavailable, o200k, utf8_upper_bound
from compiler.runtime.manifest.model import CapabilityEntry, PendingOverride
from compiler.runtime.manifest.profiles import ProfileEntry
from compiler.runtime.profiles import SEARCH_TOOL_NAMES
from compiler.source.documents import SourceDocument

# Tools named in one message: enough to act on, bounded for a profile of thousands.
SHOWN = 10

CODES = {
    "profile-over-budget": "a profile sends more tokens or tools up front than its budget",
    "profile-provider-limit": "a profile sends more tools than a provider accepts (OpenAI: 128)",
    "profile-duplicate-tool": "two capabilities of a profile have a tool of the same name",
    "profile-search-tool-name": "a deferring profile has a tool named like the search tool",
    "profile-cost-unknown": "part of a profile's cost cannot be known at compile time",
    "profile-uncountable-tool": "a tool's definition is too large or deep to count",
    "profile-no-tokenizer": "a token budget cannot be checked without the o200k encoding",
}


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
        doubtful = {cost.profile.name for cost in bounds if _may_exceed(cost)}
        if not doubtful:
            return [problem for cost in bounds
                    for problem in _problems(by_name[cost.profile.name], cost, True)]
        try:
            count = o200k()
        except EncodingUnavailable as error:
            # Never a pass on a bound that proves nothing: each budget in doubt is an
            # error saying what is known; the other limits are checked as usual.
            for cost in bounds:
                document = by_name[cost.profile.name]
                proven = cost.profile.name not in doubtful  # its bound is a valid check
                found += _problems(document, cost, proven)
                if not proven:
                    found.append(_no_tokenizer(document, cost, error))
            return found
    for cost in profile_costs(profiles, entries, plugins, count, overrides):
        found += _problems(by_name[cost.profile.name], cost, count is not None)
    return found


def _no_tokenizer(document: SourceDocument, cost: ProfileCost,
                  error: EncodingUnavailable) -> Diagnostic:
    budget = cost.profile.budget.tokens
    bound = max(cost.providers, key=lambda on: on.upfront_tokens)
    return Diagnostic.error(
        _at(document, ("budget", "tokens")), "profile-no-tokenizer",
        f"profile {cost.profile.name!r}: its budget of {budget} tokens cannot be checked: "
        f"{error}; without it the up-front tokens to {bound.provider} are only known to be "
        f"at most {bound.upfront_tokens} (a token is at least one byte)")


def _may_exceed(cost: ProfileCost) -> bool:
    budget = cost.profile.budget.tokens
    return budget is not None and any(on.upfront_tokens > budget for on in cost.providers)


def _problems(document: SourceDocument, cost: ProfileCost, counted: bool) -> list[Diagnostic]:
    profile = cost.profile
    found = [Diagnostic.error(
        _at(document, ("capabilities",)), "profile-duplicate-tool",
        f"profile {profile.name!r}: capabilities {', '.join(codes)} all offer a tool named "
        f"{name!r}; providers need unique names: keep one or rename with a ToolOverride")
        for name, codes in cost.duplicates]
    openai = cost.on("openai")
    if profile.deferred:
        clashing = sorted({tool.name for tool in openai.tools} & SEARCH_TOOL_NAMES)
        found += [Diagnostic.error(_at(document, ("deferred",)), "profile-search-tool-name",
                                   f"profile {profile.name!r} defers tools, so the provider's "
                                   f"search tool is added, and tool {name!r} has its name")
                  for name in clashing]
    # Namespaces are entries of the request's tools too (docs/profiles.md).
    upfront = len(openai.upfront) + (1 if profile.deferred else 0) + openai.namespaces
    if upfront > OPENAI_TOOL_LIMIT:
        found.append(Diagnostic.error(
            _at(document, ("capabilities",)), "profile-provider-limit",
            f"profile {profile.name!r} sends {upfront} tools up front; an OpenAI request takes "
            f"at most {OPENAI_TOOL_LIMIT}: defer or trim "
            f"{_advice(openai, upfront - OPENAI_TOOL_LIMIT)}"))
    limit = profile.budget.tools
    if limit is not None and upfront > limit:
        found.append(Diagnostic.error(
            _at(document, ("budget", "tools")), "profile-over-budget",
            f"profile {profile.name!r} sends {upfront} tools up front, over its budget of "
            f"{limit}: defer or trim {_advice(openai, upfront - limit)}"))
    unknown = {item.code: item.reason for item in openai.unknown}
    for code, reason in sorted(unknown.items()):
        found.append(Diagnostic.warning(_at(document, ("capabilities",)), "profile-cost-unknown",
                                        f"profile {profile.name!r}: {code}: {reason}"))
    if profile.budget.tokens is not None and counted:
        found += _token_problems(document, cost)
    return found


def _token_problems(document: SourceDocument, cost: ProfileCost) -> list[Diagnostic]:
    profile = cost.profile
    budget = profile.budget.tokens
    assert budget is not None
    found: list[Diagnostic] = []
    uncountable = {tool.name: tool.problem for tool in cost.on("openai").upfront
                   if tool.tokens is None}
    for name, problem in sorted(uncountable.items()):
        found.append(Diagnostic.error(
            _at(document, ("budget", "tokens")), "profile-uncountable-tool",
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
            _at(document, ("budget", "tokens")), "profile-over-budget",
            f"profile {profile.name!r} sends {bound}{total} tokens of tool definitions up "
            f"front to {provider.provider}{estimate}, over its budget of {budget}{fixed}: "
            f"defer or trim {_token_advice(provider, total - budget)}"))
    return found


def _advice(provider: ProviderCost, excess: int) -> str:
    """The biggest up-front tools, enough of them to remove ``excess`` tools."""
    chosen = provider.biggest(max(excess, 1))
    if not chosen:  # nothing counted: name the up-front tools as they come
        chosen = provider.upfront[: max(excess, 1)]
    names = ", ".join(tool.name if tool.name == tool.code else f"{tool.name} ({tool.code})"
                      for tool in chosen[:SHOWN])
    more = f" and {len(chosen) - SHOWN} more" if len(chosen) > SHOWN else ""
    return f"{names}{more}" or "some capabilities"


def _token_advice(provider: ProviderCost, excess: int) -> str:
    """The biggest up-front tools until deferring them covers ``excess`` tokens."""
    chosen: list[ToolCost] = []
    saved = 0
    for tool in provider.biggest(len(provider.upfront)):
        if saved >= excess and chosen:
            break
        chosen.append(tool)
        saved += tool.saving
    names = ", ".join(f"{tool.name} ({tool.tokens})" for tool in chosen[:SHOWN])
    more = f" and {len(chosen) - SHOWN} more" if len(chosen) > SHOWN else ""
    short = (f", {excess - saved} short: deferring cannot meet this budget, trim "
             "descriptions or raise it" if saved < excess else "")
    return f"{names}{more}; deferring them saves {saved} tokens{short}"


def _at(document: SourceDocument, path: tuple[str, ...]) -> Location:
    """The node at ``path`` when the document has it, else the document itself."""
    node: Any = document.data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return document.location()
        node = node[key]
    return document.location(path)
