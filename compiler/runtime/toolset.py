"""What ``Manifest.resolve`` returns, and how it reaches a chat model (``attach_mcp``).

``attach_mcp`` recognises LangChain's ChatOpenAI and ChatAnthropic by class name and
module along the class's MRO, so neither langchain_openai nor langchain_anthropic is
imported here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from compiler.runtime.mcp.gating import UnsupportedAuth
from compiler.runtime.mcp.providers import McpConfig, ResolvedMcpServer, mcp_config

logger = logging.getLogger(__name__)

OPENAI_CLASSES = frozenset({"ChatOpenAI", "AzureChatOpenAI", "BaseChatOpenAI"})
ANTHROPIC_CLASSES = frozenset({"ChatAnthropic"})


@dataclass(frozen=True, slots=True)
class SkippedCapability:
    """A requested capability left out of a toolset, and why."""

    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class Toolset:
    """The tools, MCP servers and skipped capabilities of one context."""

    tool_entries: tuple[Any, ...]
    skipped: tuple[SkippedCapability, ...]
    mcp_server_entries: tuple[ResolvedMcpServer, ...] = ()

    @property
    def tools(self) -> list[Any]:
        """The LangChain tools, de-duplicated by name, in the order the codes were given."""
        return list(self.tool_entries)

    def mcp(self, provider: str, *, unsupported_auth: UnsupportedAuth = "drop") -> McpConfig:
        """The MCP configuration for ``provider``: "openai", "anthropic" or "langchain".

        ``unsupported_auth="skip"`` leaves out, on Anthropic, a server whose headers the
        connector cannot send; by default they are dropped with a warning.
        """
        return mcp_config(provider, self.mcp_server_entries, unsupported_auth=unsupported_auth)


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

    OpenAI: the MCP entries join the tool list. Anthropic: a copy of the model carries
    ``mcp_servers`` and the beta, and the ``mcp_toolset`` entries join the tool list
    (the original model is left as it was). Other models: the tools alone, with a warning
    when MCP servers are dropped.
    """
    tools = toolset.tools
    provider = model_provider(llm)
    if provider == "openai":
        return llm, tools + toolset.mcp("openai").tools
    if provider == "anthropic":
        config = toolset.mcp("anthropic")
        if not config.mcp_servers:
            return llm, tools
        servers = list(getattr(llm, "mcp_servers", None) or [])
        betas = list(getattr(llm, "betas", None) or [])
        betas += [beta for beta in config.betas if beta not in betas]
        model = llm.model_copy(update={"mcp_servers": servers + config.mcp_servers, "betas": betas})
        return model, tools + config.tools
    if toolset.mcp_server_entries:
        logger.warning(
            "MCP servers %s not attached: %s is neither ChatOpenAI nor ChatAnthropic; "
            "use toolset.mcp('langchain') with langchain-mcp-adapters for client-side MCP",
            ", ".join(server.entry.server_label for server in toolset.mcp_server_entries),
            type(llm).__name__,
        )
    return llm, tools
