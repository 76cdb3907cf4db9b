"""What ``Manifest.resolve`` returns, and how it reaches a chat model (``attach_mcp``).

``attach_mcp`` recognises LangChain's ChatOpenAI and ChatAnthropic by class name and
module along the class's MRO, so neither langchain_openai nor langchain_anthropic is
imported here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.loading_policy import (
    ANTHROPIC_SEARCH_TOOLS,
    LoadingPolicy,
    deferred_config,
    is_deferred_tool,
    load_in_full,
    profiled_tool,
    sent_in_full,
)
from compiler.runtime.mcp.gating import UnsupportedAuth
from compiler.runtime.mcp.providers import McpConfig, mcp_config
from compiler.runtime.mcp.server_resolution import ResolvedMcpServer

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from compiler.runtime.context import RuntimeContext
    from compiler.runtime.mcp.sessions import ClientMcpTools

logger = logging.getLogger(__name__)

OPENAI_CLASSES = frozenset({"ChatOpenAI", "AzureChatOpenAI", "BaseChatOpenAI"})
ANTHROPIC_CLASSES = frozenset({"ChatAnthropic"})
# What a model that cannot defer or take MCP entries is told, per kind of model.
OTHER_MODEL_REMEDY = ("Deferral and hosted MCP servers work on ChatOpenAI (Responses API) and "
                      "ChatAnthropic; for client-side MCP tools use "
                      "`await toolset.client_mcp_tools()`")
CHAT_COMPLETIONS_REMEDY = ("The Chat Completions API has neither defer_loading, tool_search nor "
                           "mcp tools: use ChatOpenAI(use_responses_api=True), or "
                           "`await toolset.client_mcp_tools()` for client-side MCP tools")


@dataclass(frozen=True, slots=True)
class SkippedCapability:
    """A requested capability left out of a toolset, and why."""

    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class Toolset:
    """The tools, MCP servers and skipped capabilities of one context."""

    tool_entries: tuple[BaseTool, ...]
    skipped: tuple[SkippedCapability, ...]
    mcp_server_entries: tuple[ResolvedMcpServer, ...] = ()
    context: RuntimeContext | None = None
    egress_policy: EgressPolicy = field(default_factory=EgressPolicy)
    # Provenance of the tools built later (client-side MCP tools), as resolve recorded it.
    manifest_digest: str = ""
    profile: str | None = None
    # Set by Manifest.resolve_profile (SPEC §12): deferred loading and the search tool.
    policy: LoadingPolicy | None = None

    @property
    def tools(self) -> list[BaseTool]:
        """The LangChain tools, de-duplicated by name, in the order the codes were given."""
        return list(self.tool_entries)

    def mcp(self, provider: str, *, unsupported_auth: UnsupportedAuth = "drop",
            beta: str | None = None) -> McpConfig:
        """The MCP configuration for ``provider``: "openai", "anthropic" or "langchain".

        ``unsupported_auth="skip"`` leaves out, on Anthropic, a server whose headers the
        connector cannot send; by default they are dropped with a warning. ``beta``
        (Anthropic): ``"mcp-client-2026-09-15"`` sends each pinned server's reviewed
        listing in its ``mcp_toolset``; the default is ``"mcp-client-2025-11-20"``.
        "langchain" leaves out (in ``skipped``) every server its capability restricts
        (allowed_tools, approval, pins): :meth:`client_mcp_tools` is the path for those.
        """
        config = mcp_config(provider, self.mcp_server_entries,
                            unsupported_auth=unsupported_auth, beta=beta)
        if self.policy is None:
            return config
        deferred = frozenset(server.entry.server_label for server in self.mcp_server_entries
                             if server.code in self.policy.deferred)
        return deferred_config(config, self.policy, deferred,
                               any(is_deferred_tool(tool) for tool in self.tool_entries))

    def with_anthropic_search(self, variant: str) -> Toolset:
        """This toolset with Anthropic's ``"regex"`` tool search instead of the default
        ``"bm25"`` (natural-language queries): the model searches tool names and
        descriptions with Python regular expressions. OpenAI has one search tool."""
        if self.policy is None:
            raise ValueError("the search tool comes with a profile: resolve the toolset with "
                             "`await manifest.resolve_profile(NAME, ctx)`")
        if variant not in ANTHROPIC_SEARCH_TOOLS:
            raise ValueError(f"unknown Anthropic tool search {variant!r}; choose one of: "
                             f"{', '.join(ANTHROPIC_SEARCH_TOOLS)}")
        search_name = ANTHROPIC_SEARCH_TOOLS[variant]["name"]
        if any(tool.name == search_name for tool in self.tool_entries):
            raise ValueError(f"profile {self.policy.profile} has a tool named {search_name!r}, "
                             f"the name of the {variant} search tool")
        return replace(self, policy=replace(self.policy, anthropic_search=variant))

    def namespace_middleware(self) -> Any:
        """The ``create_agent`` middleware that sends the profile's declared namespaces to
        OpenAI (each namespace's deferred tools as one ``namespace`` entry); it leaves other
        models' requests alone. Needs ``langchain``; a toolset without a profile has none."""
        if self.policy is None:
            raise ValueError("namespaces come from a profile: resolve the toolset with "
                             "`await manifest.resolve_profile(NAME, ctx)`")
        try:
            from compiler.runtime.namespace_middleware import OpenAINamespaces
        except ImportError as error:  # the middleware is langchain's create_agent's
            raise ImportError("toolset.namespace_middleware() is a middleware for langchain's "
                              "create_agent: install langchain") from error
        return OpenAINamespaces(self.policy, model_provider)

    async def client_mcp_tools(self, *, timeout: float = 30.0) -> ClientMcpTools:
        """Client-side LangChain tools for the MCP servers (needs the extra ``capc[mcp]``).

        Only ``allowed_tools`` are offered; a pinned server's tool that is not pinned or
        whose live descriptor differs from its pin is left out (in ``skipped``, logged);
        a tool whose ``require_approval`` is not "never" runs only when
        ``RuntimeContext.approve`` says yes, and is left out without one.
        """
        from compiler.runtime.mcp.sessions import client_mcp_tools

        return await client_mcp_tools(self.mcp_server_entries, self.context,
                                      self.egress_policy, timeout,
                                      taken_names=[tool.name for tool in self.tool_entries],
                                      manifest_digest=self.manifest_digest,
                                      profile=self.profile,
                                      deferred=self.policy.deferred if self.policy else ())

    def with_client_tools(self, client: ClientMcpTools) -> Toolset:
        """This toolset with its MCP servers served client side by ``client`` (from
        :meth:`client_mcp_tools`): its tools join the tools and no server is attached as
        a hosted one, so ``attach_mcp`` adds the search tool a deferred server's tools
        need, or, on a model that cannot defer, sends them in full and says so."""
        return replace(self, tool_entries=self.tool_entries + tuple(client.tool_entries),
                       mcp_server_entries=())

    def __repr__(self) -> str:
        # Tools hold their context's resolved endpoint and servers their resolved URLs and
        # headers: a toolset shows names, never what was resolved into them.
        names = [str(getattr(tool, "name", type(tool).__name__)) for tool in self.tool_entries]
        servers = [server.entry.server_label for server in self.mcp_server_entries]
        return (
            f"Toolset(tools={names!r}, mcp_servers={servers!r}, skipped={list(self.skipped)!r})"
        )


def with_policy(toolset: Toolset, policy: LoadingPolicy, codes: dict[str, str],
                fresh: set[str]) -> Toolset:
    """``toolset`` resolved through a profile: each tool (``codes``: tool name -> code)
    carries the profile's name, and the deferred ones ``defer_loading``. Tools named in
    ``fresh`` were built for this toolset alone and are marked in place; the others
    (registry tools, shared) are copied."""
    tools = tuple(profiled_tool(tool, policy.profile, codes.get(tool.name) in policy.deferred,
                                in_place=tool.name in fresh)
                  for tool in toolset.tool_entries)
    return replace(toolset, tool_entries=tools, policy=policy, profile=policy.profile)


def model_provider(llm: Any) -> str | None:
    """"openai" or "anthropic" for LangChain's chat models (and subclasses), else None."""
    for cls in type(llm).__mro__:
        module = cls.__module__ or ""
        if cls.__name__ in OPENAI_CLASSES and module.startswith("langchain_openai"):
            return "openai"
        if cls.__name__ in ANTHROPIC_CLASSES and module.startswith("langchain_anthropic"):
            return "anthropic"
    return None


def attach_mcp(llm: Any, toolset: Toolset) -> tuple[Any, list[Any]]:
    """``(model, tools)`` ready for an agent: the toolset's tools plus its MCP servers.

    OpenAI (Responses API): the MCP entries join the tool list. Anthropic: a copy of the
    model carries ``mcp_servers`` and the beta, and the ``mcp_toolset`` entries join the
    tool list (the original model is left as it was). A profile's search tool joins them
    when anything is deferred. Other chat models and ``ChatOpenAI(use_responses_api=False)``
    cannot defer: the tools alone, in full, with a warning naming the deferred tools and
    the MCP servers dropped (ProfileOverBudget past the profile's ``tools`` budget).

    A model wrapped by ``bind`` or ``with_config``, or made by ``init_chat_model`` with a
    fixed provider, is attached through its wrapper (the wrapper is kept). A wrapper that
    cannot bind tools afterwards (``with_retry``, ``with_fallbacks``) raises TypeError
    naming the order that works (attach, bind tools, then wrap); so does any other runnable.
    """
    if not toolset.mcp_server_entries and toolset.policy is None:
        return llm, toolset.tools
    return _attach(llm, toolset)


def _attach(llm: Any, toolset: Toolset) -> tuple[Any, list[Any]]:
    """The model with the servers attached, and its tool list (tools, then MCP entries)."""
    provider = model_provider(llm)
    if provider == "openai":
        if getattr(llm, "use_responses_api", None) is False:
            return llm, _not_deferred(toolset, "ChatOpenAI(use_responses_api=False)",
                                      CHAT_COMPLETIONS_REMEDY)
        return llm, toolset.tools + toolset.mcp("openai").tools
    if provider == "anthropic":
        config = toolset.mcp("anthropic")
        if not config.mcp_servers:
            # the search tool alone, when tools are deferred
            return llm, toolset.tools + config.tools
        servers = list(getattr(llm, "mcp_servers", None) or [])
        betas = _merged(getattr(llm, "betas", None), config.betas)
        model = llm.model_copy(update={"mcp_servers": servers + config.mcp_servers, "betas": betas})
        return model, toolset.tools + config.tools
    if _is_instance_of(llm, "langchain_core.runnables", "RunnableWithFallbacks") or (
        _is_instance_of(llm, "langchain_core.runnables", "RunnableBindingBase")
        and not hasattr(llm, "bind_tools")
    ):
        # with_retry(), with_fallbacks(): what comes back could not take the tool list, so
        # the MCP entries would never reach the wire. Say the order that works.
        raise TypeError(
            f"attach_mcp cannot attach to a {type(llm).__name__}: tools cannot be bound to it "
            "afterwards, so the MCP entries would never be sent. Use this order: attach_mcp on "
            "the bare or bound model, then bind tools, then wrap: `model, tools = "
            "attach_mcp(llm, toolset); model.bind_tools(tools).with_retry()`"
        )
    if _is_instance_of(llm, "langchain_core.runnables", "RunnableBindingBase"):
        # bind(), with_config(): attach to what is wrapped, keep the wrapper.
        inner, tools = _attach(llm.bound, toolset)
        if inner is llm.bound:
            return llm, tools
        return llm.model_copy(update={"bound": inner}), tools
    if _is_instance_of(llm, "langchain", "_ConfigurableModel"):
        return _attach_configurable(llm, toolset)
    if _is_instance_of(llm, "langchain_core.language_models", "BaseChatModel"):
        return llm, _not_deferred(toolset, type(llm).__name__, OTHER_MODEL_REMEDY)
    raise TypeError(
        f"attach_mcp cannot see a chat model inside {type(llm).__name__}: pass the chat model "
        "itself (ChatOpenAI, ChatAnthropic, or one wrapped by bind or with_config), then bind "
        "tools, then wrap it further (with_retry, with_fallbacks, a prompt pipeline)"
    )


def _attach_configurable(llm: Any, toolset: Toolset) -> tuple[Any, list[Any]]:
    """An ``init_chat_model(...)`` model whose provider is fixed, attached by its defaults."""
    defaults: dict[str, Any] = dict(llm._default_config)
    configurable = llm._configurable_fields
    provider = _configured_provider(defaults)
    if (
        provider is None
        or configurable == "any"
        or {"model", "model_provider"} & set(configurable)
    ):
        raise TypeError(
            "attach_mcp needs to know the provider, and this init_chat_model(...) model may "
            "choose it at run time: pass a model with a fixed provider, such as "
            "init_chat_model('openai:gpt-4.1', configurable_fields=('temperature',)), "
            "ChatOpenAI(...) or ChatAnthropic(...)"
        )
    if provider == "openai":
        if "use_responses_api" in configurable and toolset.mcp("openai").tools:
            raise TypeError(
                "attach_mcp cannot tell which OpenAI API this init_chat_model(...) model will "
                "call: use_responses_api is configurable, and the MCP entries and deferred "
                "tools need the Responses API. Fix it: init_chat_model(..., "
                "use_responses_api=True) without it in configurable_fields")
        if defaults.get("use_responses_api") is False:
            return llm, _not_deferred(toolset, "ChatOpenAI(use_responses_api=False)",
                                      CHAT_COMPLETIONS_REMEDY)
        return llm, toolset.tools + toolset.mcp("openai").tools
    config = toolset.mcp("anthropic")
    if not config.mcp_servers:
        return llm, toolset.tools + config.tools  # the search tool, when tools are deferred
    defaults["mcp_servers"] = list(defaults.get("mcp_servers") or []) + config.mcp_servers
    defaults["betas"] = _merged(defaults.get("betas"), config.betas)
    model = type(llm)(
        default_config=defaults,
        configurable_fields=configurable,
        config_prefix=llm._config_prefix,
        queued_declarative_operations=llm._queued_declarative_operations,
    )
    return model, toolset.tools + config.tools


def _not_deferred(toolset: Toolset, model: str, remedy: str) -> list[Any]:
    """The tool list for ``model``, which can neither defer nor take MCP entries: the tools
    in full and no MCP entry, each said in a warning (ProfileOverBudget past the budget)."""
    if toolset.mcp_server_entries:
        logger.warning(
            "MCP servers %s not attached: %s cannot take them. %s",
            ", ".join(server.entry.server_label for server in toolset.mcp_server_entries),
            model, remedy)
    if toolset.policy is None:
        return toolset.tools
    load_in_full(toolset.policy, toolset.tools, model, remedy)
    return [sent_in_full(tool) for tool in toolset.tools]


def _configured_provider(defaults: dict[str, Any]) -> str | None:
    """"openai" or "anthropic" as ``init_chat_model`` would pick from its defaults."""
    provider = defaults.get("model_provider")
    model = str(defaults.get("model") or "")
    if not provider and ":" in model:
        provider = model.split(":", 1)[0]
    if not provider:
        if model.startswith("claude"):
            provider = "anthropic"
        elif model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
            provider = "openai"
    return provider if provider in ("openai", "anthropic") else None


def _merged(existing: Any, betas: list[str]) -> list[str]:
    merged = list(existing or [])
    return merged + [beta for beta in betas if beta not in merged]


def _is_instance_of(value: Any, module_prefix: str, class_name: str) -> bool:
    # By name along the MRO: neither langchain nor langchain_core is imported for this.
    return any(
        cls.__name__ == class_name and (cls.__module__ or "").startswith(module_prefix)
        for cls in type(value).__mro__
    )
