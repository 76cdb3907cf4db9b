"""A profile's loading policy at runtime (SPEC §12): deferred tools and the search tool.

``Manifest.resolve_profile`` resolves a profile's codes and hands the toolset a
:class:`LoadingPolicy`. Tools of deferred capabilities carry ``defer_loading: true`` in
their LangChain ``extras`` (langchain-openai and langchain-anthropic copy it onto the wire)
and every tool carries the profile's name in its ``metadata``. MCP entries of deferred
servers carry the flag in each provider's own place, and exactly one search tool joins
the provider's entries whenever anything is deferred, so nothing deferred is ever sent
without a way to find it. The entries match the installed SDK request types:
``openai.types.responses`` ``FunctionToolParam`` / ``Mcp`` / ``ToolSearchToolParam``;
``anthropic.types.beta`` ``BetaToolParam`` / ``BetaMCPToolsetParam`` /
``BetaToolSearchToolBm25_20251119Param``.

A profile's namespaces (OpenAI only, ``NamespaceToolParam``) are applied where the tool
list is bound: :func:`openai_namespaced` replaces a namespace's deferred tools by one
``namespace`` entry holding their function definitions, so the model sees the namespace's
name and description up front and nothing of its functions. The namespaces are the
profile's declared ones and, for a deferred internal capability in none of them that
brings two tools or more, one of its own (its code, its description):
:func:`automatic_namespaces` is the rule, which the budget applies too. The tools
themselves stay in the agent's tool list: the model calls a namespaced function by its
own name (the output item's ``namespace`` field says the group), which is how LangChain
finds the tool to run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.runtime.errors import RuntimeLoaderError
from compiler.runtime.manifest.model import CapabilityEntry
from compiler.runtime.manifest.profile_entries import NamespaceEntry, ProfileBudget, ProfileEntry
from compiler.runtime.mcp.providers import McpConfig
from compiler.runtime.provenance import CAPABILITY_KEY

logger = logging.getLogger(__name__)

OPENAI_SEARCH_TOOL: Mapping[str, Any] = {"type": "tool_search"}
ANTHROPIC_SEARCH_TOOL: Mapping[str, Any] = {
    "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
# Anthropic's two search tools (anthropic.types.beta BetaToolSearchTool{Bm25,Regex}_20251119
# Param): BM25 over natural-language queries, the default; regex over names and descriptions.
ANTHROPIC_SEARCH_TOOLS: Mapping[str, Mapping[str, Any]] = {
    "bm25": ANTHROPIC_SEARCH_TOOL,
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
# Names no capability tool may take in a profile: the search tools' own.
SEARCH_TOOL_NAMES = frozenset({"tool_search", "tool_search_tool_bm25"})
DEFERRING_PROVIDERS = ("openai", "anthropic")


@dataclass(frozen=True, slots=True)
class LoadingPolicy:
    """Which codes of one profile are deferred, and the profile's name."""

    profile: str
    deferred: frozenset[str] = frozenset()
    namespaces: tuple[NamespaceEntry, ...] = ()
    # Deferred internal capabilities in no declared namespace -> the description their
    # own namespace gets when they bring two tools or more (automatic_namespaces).
    own_namespaces: Mapping[str, str] = field(default_factory=dict)
    budget: ProfileBudget = field(default_factory=ProfileBudget)
    # Which of ANTHROPIC_SEARCH_TOOLS Anthropic gets (Toolset.with_anthropic_search).
    anthropic_search: str = "bm25"

    def search_tool(self, provider: str, deferred_entries: bool) -> dict[str, Any] | None:
        """The one search tool ``provider`` needs when anything is deferred, else None."""
        if not deferred_entries:
            return None
        if provider == "openai":
            return dict(OPENAI_SEARCH_TOOL)
        if provider == "anthropic":
            return dict(ANTHROPIC_SEARCH_TOOLS[self.anthropic_search])
        return None


def profile_policy(profile: ProfileEntry,
                   capabilities: Mapping[str, CapabilityEntry]) -> LoadingPolicy:
    """The loading policy of ``profile``: its deferred codes, its declared namespaces, and
    the deferred internal capabilities in none of them, each with the description of the
    namespace of its own it gets when it brings two tools or more."""
    declared = {code for namespace in profile.namespaces for code in namespace.capabilities}
    own = {code: own_namespace_description(entry.description, entry.name)
           for code in profile.deferred
           if code not in declared and (entry := capabilities.get(code)) is not None
           and entry.type == "internal"}
    return LoadingPolicy(profile.name, frozenset(profile.deferred), profile.namespaces, own,
                         profile.budget)


def profiled_tool(tool: Any, profile: str, deferred: bool, *, in_place: bool = False) -> Any:
    """LangChain ``tool`` carrying the profile in ``metadata`` and, when deferred,
    ``defer_loading`` in ``extras``: a copy (a registry's shared tool is left as it was),
    or, with ``in_place``, the tool itself (one built for this toolset alone)."""
    metadata = {**(getattr(tool, "metadata", None) or {}), "profile": profile}
    extras = dict(getattr(tool, "extras", None) or {})
    if deferred:
        extras["defer_loading"] = True
    if in_place:
        tool.metadata = metadata
        if extras:
            tool.extras = extras
        return tool
    update: dict[str, Any] = {"metadata": metadata}
    if extras:
        update["extras"] = extras
    return tool.model_copy(update=update)


def is_deferred_tool(tool: Any) -> bool:
    """Whether a LangChain tool asks to be deferred."""
    extras = getattr(tool, "extras", None)
    return isinstance(extras, Mapping) and extras.get("defer_loading") is True


def openai_namespaced(tools: Sequence[Any], policy: LoadingPolicy) -> list[Any]:
    """``tools`` as bound for OpenAI's Responses API: the deferred LangChain tools of each
    namespace (declared, or a capability's own) replaced, where the first of them stood,
    by one ``namespace`` entry; everything else (up-front tools, provider dicts) as it was.
    Linear in the tools and the namespaces' codes."""
    # One look-up per tool: a profile's namespaces may list hundreds of codes.
    owners = {code: namespace for namespace in policy.namespaces
              for code in namespace.capabilities if code in policy.deferred}
    codes = [_capability(tool) if is_deferred_tool(tool) else None for tool in tools]
    counts: dict[str, int] = {}
    for code in codes:
        if code is not None and code not in owners and code in policy.own_namespaces:
            counts[code] = counts.get(code, 0) + 1
    taken = {str(name) for tool in tools
             if (name := _tool_name(tool)) is not None} | {ns.name for ns in policy.namespaces}
    for code in automatic_namespaces(counts, taken):
        owners[code] = NamespaceEntry(code, policy.own_namespaces[code], (code,))
    groups: dict[str, list[dict[str, Any]]] = {}
    grouped: list[Any] = []
    for tool, code in zip(tools, codes, strict=True):
        namespace = owners.get(code) if code is not None else None
        if namespace is None:
            grouped.append(tool)
            continue
        if namespace.name not in groups:
            groups[namespace.name] = []
            grouped.append(_NamespaceSlot(namespace))
        groups[namespace.name].append(responses_function(tool))
    return [{"type": "namespace", "name": item.entry.name,
             "description": item.entry.description, "tools": groups[item.entry.name]}
            if isinstance(item, _NamespaceSlot) else item for item in grouped]


def own_namespace_description(description: str | None, name: str) -> str:
    """What a capability's own namespace says: its description, else its name."""
    return description or name


def automatic_namespaces(tool_counts: Mapping[str, int], taken: set[str]) -> list[str]:
    """The capabilities that get a namespace of their own, named by their code: of the
    candidates (``tool_counts``: code -> its deferred tools), those with two tools or more
    (one gains nothing) whose code is no name in ``taken`` (the request's tools, servers
    and declared namespaces) nor a search tool's."""
    return [code for code, count in tool_counts.items()
            if count >= 2 and code not in taken and code not in SEARCH_TOOL_NAMES]


def _tool_name(tool: Any) -> Any:
    """A tool's name in the request: a LangChain tool's, a dict entry's name or label."""
    if isinstance(tool, Mapping):
        return tool.get("name") or tool.get("server_label")
    return getattr(tool, "name", None)


@dataclass(frozen=True, slots=True)
class _NamespaceSlot:
    """Where a namespace's entry goes in the grouped list (its first tool's place)."""

    entry: NamespaceEntry


def _capability(tool: Any) -> str | None:
    metadata = getattr(tool, "metadata", None)
    code = metadata.get(CAPABILITY_KEY) if isinstance(metadata, Mapping) else None
    return code if isinstance(code, str) else None


def responses_function(tool: Any) -> dict[str, Any]:
    """A LangChain tool as a Responses API ``function`` (inside a namespace): the
    definition langchain-openai would send, with ``defer_loading`` from its extras."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    definition = convert_to_openai_tool(tool)["function"]
    function = {"type": "function", **definition}
    if is_deferred_tool(tool):
        function["defer_loading"] = True
    return function


def defer_openai_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``mcp`` tool entry whose tools are loaded through the tool search."""
    return {**entry, "defer_loading": True}


def defer_anthropic_toolset(entry: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic ``mcp_toolset`` whose tools are all deferred (default and per tool)."""
    default = {**entry.get("default_config", {}), "defer_loading": True}
    configs = {name: {**config, "defer_loading": True}
               for name, config in (entry.get("configs") or {}).items()}
    deferred = {**entry, "default_config": default}
    if configs:
        deferred["configs"] = configs
    return deferred


def warn_cannot_defer(provider: str, profile: str, labels: list[str]) -> None:
    """Say, never silently, what becomes of deferred servers on a ``provider`` that cannot
    defer: langchain-mcp-adapters gets them in full; any other provider none at all."""
    if not labels:
        return
    if provider == "langchain":
        logger.warning(
            "profile %s: langchain-mcp-adapters cannot defer loading; the deferred MCP "
            "servers %s are offered in full (deferral works on: %s)", profile,
            ", ".join(labels), ", ".join(DEFERRING_PROVIDERS))
    else:
        logger.warning(
            "profile %s: the deferred MCP servers %s are not offered at all: provider %r has "
            "no MCP support here (deferral works on: %s)", profile, ", ".join(labels),
            provider, ", ".join(DEFERRING_PROVIDERS))


def sent_in_full(tool: Any) -> Any:
    """``tool`` without ``defer_loading`` (a copy), as sent to a model that cannot defer:
    the flag would be an unknown key there (Chat Completions refuses it)."""
    if not is_deferred_tool(tool):
        return tool
    extras = {key: value for key, value in tool.extras.items() if key != "defer_loading"}
    return tool.model_copy(update={"extras": extras or None})


class ProfileOverBudget(RuntimeLoaderError):
    """A model that cannot defer would get more tools up front than the profile allows."""


def load_in_full(policy: LoadingPolicy, tools: Sequence[Any], model: str,
                 how_to_defer: str) -> None:
    """Say that ``model`` gets the deferred ones of ``tools`` (all it will be sent) in full.

    Raises ProfileOverBudget when that puts more tools up front than the budget's
    ``tools``. The ``tokens`` budget is not counted here (the count is the compiler's,
    ``capc budget``): the warning says so.
    """
    deferred = [str(tool.name) for tool in tools if is_deferred_tool(tool)]
    if not deferred:
        return
    limit = policy.budget.tools
    if limit is not None and len(tools) > limit:
        raise ProfileOverBudget(
            f"profile {policy.profile}: {model} cannot defer loading, and sending the deferred "
            f"tools {', '.join(deferred)} in full puts {len(tools)} tools up front, over the "
            f"profile's budget of {limit}. {how_to_defer}, or use a profile that defers "
            "nothing for this model")
    tokens = ("" if policy.budget.tokens is None else
              f"; its token budget ({policy.budget.tokens}) is not checked at runtime: "
              "`capc budget` shows what the tools cost")
    logger.warning(
        "profile %s: %s cannot defer loading; the deferred tools %s are sent in full "
        "(%d tools up front%s). %s", policy.profile, model, ", ".join(deferred), len(tools),
        tokens, how_to_defer)


def deferred_config(config: McpConfig, policy: LoadingPolicy, deferred_labels: frozenset[str],
                    deferred_tools: bool) -> McpConfig:
    """``config`` with the deferred servers flagged and the search tool added when needed.

    ``deferred_tools``: whether any LangChain tool of the toolset is deferred (they need
    the search tool too, even with no MCP server at all).
    """
    provider = config.provider
    entries = [dict(entry) for entry in config.tool_entries]
    if provider == "openai":
        entries = [defer_openai_entry(entry) if entry.get("server_label") in deferred_labels
                   else entry for entry in entries]
    elif provider == "anthropic":
        entries = [defer_anthropic_toolset(entry)
                   if entry.get("mcp_server_name") in deferred_labels else entry
                   for entry in entries]
    else:
        warn_cannot_defer(provider, policy.profile, sorted(deferred_labels))
    attached = {str(entry.get("server_label") or entry.get("mcp_server_name"))
                for entry in entries}
    search = policy.search_tool(provider, deferred_tools or bool(deferred_labels & attached))
    if search is not None:
        entries.append(search)
    return replace(config, tool_entries=tuple(entries))
