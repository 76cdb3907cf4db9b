"""What each profile costs per provider: up-front and deferred tools and tokens.

Each capability's definitions are counted once, however many profiles name it, in one
batch per provider. A figure the compiler cannot know (an unpinned server, an uncounted
definition) is carried as unknown next to the known part, never as zero.

On OpenAI, what the tool search can load is not free up front: the model sees each
namespace's name and description, and each deferred function's own name and description
when it is in no namespace (OpenAI's tool search guide). OpenAI publishes no counting
rule for these; capc counts each like a function without parameters (7 tokens plus
``name:description``), an assumption stated in docs/profiles.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compiler.profiles.definitions import (
    CapabilityTools,
    Unknown,
    boot_overrides,
    capability_tools,
)
from compiler.profiles.tokens import (
    ANTHROPIC_TOOL_PROMPT,
    FUNCTIONS_END,
    Counter,
    Definition,
    anthropic_tokens,
    compact_json,
    definition_size_problem,
    openai_tokens,
)
from compiler.runtime.loading_policy import (
    ANTHROPIC_SEARCH_TOOL,
    OPENAI_SEARCH_TOOL,
    automatic_namespaces,
    own_namespace_description,
)
from compiler.runtime.manifest.model import CapabilityEntry, PendingOverride
from compiler.runtime.manifest.profile_entries import ProfileEntry

PROVIDERS = ("openai", "anthropic")
ESTIMATED = {"openai": False, "anthropic": True}
OPENAI_TOOL_LIMIT = 128


@dataclass(frozen=True, slots=True)
class ToolCost:
    """One tool of a profile on one provider (``tokens`` None: it could not be counted)."""

    name: str
    code: str
    deferred: bool
    tokens: int | None
    problem: str | None = None
    # Tokens that stay up front when this tool is deferred: on OpenAI a deferred function
    # outside a namespace still shows its name and description (a parameterless entry).
    kept: int = 0

    @property
    def saving(self) -> int:
        """What deferring this up-front tool takes off every request (0 when uncounted)."""
        return max((self.tokens or 0) - self.kept, 0)


@dataclass(frozen=True, slots=True)
class ProviderCost:
    """A profile's tools on one provider; ``estimate``: the figures are not the provider's."""

    provider: str
    estimate: bool
    tools: tuple[ToolCost, ...]
    unknown: tuple[Unknown, ...]
    overhead: int
    # Entries sent up front besides the tools: OpenAI namespaces (each one entry).
    namespaces: int = 0
    # The search tool's tokens on this provider: in ``overhead`` once anything is deferred,
    # and what deferring the first tool adds to a profile that defers nothing yet.
    search: int = 0

    def saving(self, tools: Iterable[ToolCost], searching: bool) -> int:
        """What deferring ``tools`` (up front now) takes off every request: their savings,
        less the search tool when the profile defers nothing yet (``searching`` False)."""
        return max(sum(tool.saving for tool in tools) - (0 if searching else self.search), 0)

    @property
    def upfront(self) -> list[ToolCost]:
        """The tools sent on every turn."""
        return [tool for tool in self.tools if not tool.deferred]

    @property
    def deferred(self) -> list[ToolCost]:
        """The tools offered through the tool search."""
        return [tool for tool in self.tools if tool.deferred]

    @property
    def upfront_tokens(self) -> int:
        """Known up-front tokens, the request's fixed part included."""
        return self.overhead + sum(tool.tokens or 0 for tool in self.upfront)

    @property
    def deferred_tokens(self) -> int:
        """Known tokens of the deferred tools (paid only when the search loads them)."""
        return sum(tool.tokens or 0 for tool in self.deferred)

    @property
    def complete(self) -> bool:
        """Whether every up-front figure is known (else the total is a lower bound)."""
        return not any(u for u in self.unknown) and all(
            tool.tokens is not None for tool in self.upfront)

    def biggest(self, limit: int = 5) -> list[ToolCost]:
        """The costliest up-front tools, biggest first (ties by name)."""
        counted = [tool for tool in self.upfront if tool.tokens is not None]
        return sorted(counted, key=lambda tool: (-(tool.tokens or 0), tool.name))[:limit]


@dataclass(frozen=True, slots=True)
class ProfileCost:
    """One profile's cost on every provider, and the tool names two capabilities share."""

    profile: ProfileEntry
    providers: tuple[ProviderCost, ...]
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def on(self, provider: str) -> ProviderCost:
        """The cost on ``provider``."""
        return next(cost for cost in self.providers if cost.provider == provider)

    def upfront_entries(self, provider: str) -> int:
        """The entries of the request's tools on ``provider``: the up-front tools, the
        OpenAI namespaces and the search tool once anything is deferred."""
        on = self.on(provider)
        return len(on.upfront) + on.namespaces + (1 if self.profile.deferred else 0)

    def entries_complete(self, provider: str) -> bool:
        """Whether :meth:`upfront_entries` is a count (else a lower bound): no capability
        of unknown tools is up front, nor deferred where it may form a namespace (only a
        deferred MCP server is sure to add no entry)."""
        deferred = set(self.profile.deferred)
        return not any(item.code not in deferred or item.kind != "mcp"
                       for item in self.on(provider).unknown)


def profile_costs(profiles: Iterable[ProfileEntry], entries: Iterable[CapabilityEntry],
                  plugins: Mapping[str, Any], count: Counter | None,
                  overrides: Iterable[PendingOverride] = ()) -> list[ProfileCost]:
    """The cost of every profile; ``count`` None: tokens unknown (no encoding installed).

    ``overrides``: the manifest's pending overrides, which the loader applies to plugin
    tools at boot; every caller passes them, so compile, ``capc budget`` and ``capc diff``
    cost the same names and descriptions the model is sent.
    """
    profiles = list(profiles)
    by_code = {entry.code: entry for entry in entries}
    needed = dict.fromkeys(code for profile in profiles for code in profile.capabilities
                           if code in by_code)
    at_boot = boot_overrides(overrides)
    tools = {code: capability_tools(by_code[code], plugins, at_boot) for code in needed}
    prepared = _prepared(tools.values())
    counted = {provider: _counted(provider, prepared, count) for provider in PROVIDERS}
    search = {provider: _search_tokens(provider, count) for provider in PROVIDERS}
    return [_profile_cost(profile, tools, counted, count, by_code, search)
            for profile in profiles]


# (code, index) -> (definition, its compact JSON, why it cannot be counted or None)
_Prepared = dict[tuple[str, int], tuple[Definition, str, str | None]]


def _prepared(capabilities: Iterable[CapabilityTools]) -> _Prepared:
    """Each definition's JSON and size check, once for every provider."""
    prepared: _Prepared = {}
    for capability in capabilities:
        for index, definition in enumerate(capability.definitions):
            try:
                text = compact_json(definition)
            except (RecursionError, TypeError, ValueError):
                prepared[(capability.code, index)] = (
                    definition, "", "its schema cannot be written as JSON")
                continue
            prepared[(capability.code, index)] = (
                definition, text, definition_size_problem(definition, text))
    return prepared


def _counted(provider: str, prepared: _Prepared,
             count: Counter | None) -> dict[tuple[str, int], tuple[int | None, str | None]]:
    """``{(code, index): (tokens, problem)}`` for every definition, in one batch."""
    keys: list[tuple[str, int]] = []
    definitions: list[Definition] = []
    texts: list[str] = []
    results: dict[tuple[str, int], tuple[int | None, str | None]] = {}
    for key, (definition, text, problem) in prepared.items():
        if problem is not None or count is None:
            results[key] = (None, problem or "no tokenizer installed (capc[budget])")
        else:
            keys.append(key)
            definitions.append(definition)
            texts.append(text)
    if definitions and count is not None:
        counted = (openai_tokens(definitions, count) if provider == "openai"
                   else anthropic_tokens(definitions, count, texts))
        for key, tokens in zip(keys, counted, strict=True):
            results[key] = (tokens, None)
    return results


def _profile_cost(profile: ProfileEntry, tools: Mapping[str, CapabilityTools],
                  counted: Mapping[str, Mapping[tuple[str, int], tuple[int | None, str | None]]],
                  count: Counter | None, by_code: Mapping[str, CapabilityEntry],
                  search_tokens: Mapping[str, int]) -> ProfileCost:
    owners: dict[str, list[str]] = {}
    for code in profile.capabilities:
        capability = tools.get(code)
        for definition in capability.definitions if capability else ():
            owners.setdefault(definition.name, []).append(code)
    duplicates = tuple((name, tuple(codes)) for name, codes in sorted(owners.items())
                       if len(codes) > 1)
    deferred = frozenset(profile.deferred)
    providers = []
    for provider in PROVIDERS:
        costs: list[ToolCost] = []
        sent: list[tuple[Definition, bool]] = []  # each cost's definition; an MCP tool?
        unknown: list[Unknown] = []
        for code in profile.capabilities:
            capability = tools.get(code)
            if capability is None:
                continue
            if capability.unknown is not None:
                unknown.append(capability.unknown)
            for index, definition in enumerate(capability.definitions):
                tokens, problem = counted[provider][(code, index)]
                costs.append(ToolCost(definition.name, code, code in deferred, tokens, problem))
                sent.append((definition, capability.kind == "mcp"))
        if provider == "openai" and count is not None:
            costs = _with_kept(costs, sent, count)
        search = search_tokens[provider]
        overhead = _overhead(provider, costs) + (search if profile.deferred else 0)
        namespaces = 0
        if provider == "openai":
            lines, namespaces = _searchable(profile, tools, by_code)
            overhead += sum(openai_tokens(lines, count)) if lines and count is not None else 0
        providers.append(ProviderCost(provider, ESTIMATED[provider], tuple(costs),
                                      tuple(unknown), overhead, namespaces, search))
    return ProfileCost(profile, tuple(providers), duplicates)


def _with_kept(costs: list[ToolCost], sent: Sequence[tuple[Definition, bool]],
               count: Counter) -> list[ToolCost]:
    """OpenAI: each up-front function's parameterless line, what deferring it would keep
    (``sent``: each cost's definition, and whether it is an MCP server's tool)."""
    lines = {position: Definition(definition.name, definition.description, {})
             for position, (cost, (definition, mcp)) in enumerate(zip(costs, sent, strict=True))
             if not cost.deferred and cost.tokens is not None and not mcp}
    if not lines:
        return costs
    kept = dict(zip(lines, openai_tokens(list(lines.values()), count), strict=True))
    return [replace(cost, kept=kept[position]) if position in kept else cost
            for position, cost in enumerate(costs)]


def _searchable(profile: ProfileEntry, tools: Mapping[str, CapabilityTools],
                by_code: Mapping[str, CapabilityEntry]) -> tuple[list[Definition], int]:
    """What OpenAI shows up front of the deferred functions, as parameterless definitions:
    each used namespace's name and description, and each deferred function's outside a
    namespace; and how many namespaces are used (deferred MCP servers are not counted)."""
    lines: list[Definition] = []
    grouped: set[str] = set()
    used = 0
    for namespace in profile.namespaces:
        grouped.update(namespace.capabilities)
        if any((capability := tools.get(code)) is not None and capability.definitions
               for code in namespace.capabilities):
            lines.append(Definition(namespace.name, namespace.description, {}))
            used += 1
    # The runtime's rule: a multi-tool internal capability gets a namespace of its own.
    counts = {code: len(capability.definitions) for code in profile.deferred
              if code not in grouped and (capability := tools.get(code)) is not None
              and capability.kind == "internal"}
    mine = [tools[code] for code in profile.capabilities if code in tools]
    taken = {definition.name for capability in mine for definition in capability.definitions}
    taken |= {namespace.name for namespace in profile.namespaces}
    taken |= {entry.mcp.server_label for code in profile.capabilities
              if (entry := by_code.get(code)) is not None and entry.mcp is not None}
    for code in automatic_namespaces(counts, taken):
        grouped.add(code)
        entry = by_code[code]
        lines.append(Definition(code, own_namespace_description(entry.description,
                                                                entry.name), {}))
        used += 1
    for code in profile.deferred:
        capability = tools.get(code)
        if code not in grouped and capability is not None and capability.kind != "mcp":
            lines += [Definition(definition.name, definition.description, {})
                      for definition in capability.definitions]
    return lines, used


def _overhead(provider: str, costs: Sequence[ToolCost]) -> int:
    """The request's fixed tokens: the recipe's 12 or Anthropic's tool prompt."""
    return (FUNCTIONS_END if provider == "openai" else ANTHROPIC_TOOL_PROMPT) if costs else 0


def _search_tokens(provider: str, count: Counter | None) -> int:
    """The provider's search tool, sent once anything is deferred (its entry's JSON, an
    estimate); 0 without a counter."""
    if count is None:
        return 0
    search = OPENAI_SEARCH_TOOL if provider == "openai" else ANTHROPIC_SEARCH_TOOL
    return count([json.dumps(search, separators=(",", ":"))])[0]
