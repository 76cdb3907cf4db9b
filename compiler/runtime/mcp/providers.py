"""MCP servers in each provider's request shape: OpenAI, Anthropic, LangChain adapters.

The entries are plain dicts matching the official SDK request types
(``openai.types.responses.tool_param.Mcp``; ``anthropic.types.beta``
``BetaRequestMCPServerURLDefinitionParam`` and ``BetaMCPToolsetParam``), built from
servers whose ``${...}`` placeholders are already resolved for the context.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.runtime.manifest.pinned import PinnedToolEntry
from compiler.runtime.manifest.read import thaw
from compiler.runtime.mcp.gating import (
    UnsupportedAuth,
    allowed_tool_names,
    anthropic_dropped_headers,
    anthropic_gate,
    bearer_token,
    check_unsupported_auth,
)
from compiler.runtime.mcp.server_resolution import ResolvedMcpServer

logger = logging.getLogger(__name__)

ANTHROPIC_MCP_BETA = "mcp-client-2025-11-20"
# The beta under which an mcp_toolset may carry the pinned listing itself (``tools``).
ANTHROPIC_PINNED_BETA = "mcp-client-2026-09-15"
ANTHROPIC_BETAS = (ANTHROPIC_MCP_BETA, ANTHROPIC_PINNED_BETA)
PROVIDERS = ("openai", "anthropic", "langchain")
# Keys a capability may not override through its pass-through extras.
OPENAI_CORE_KEYS = frozenset(
    {"type", "server_label", "server_url", "require_approval", "headers", "allowed_tools"}
)


@dataclass(frozen=True, slots=True)
class SkippedServer:
    """A server left out for one provider, and why."""

    code: str
    server_label: str
    reason: str


@dataclass(frozen=True, slots=True)
class McpConfig:
    """One provider's MCP entries: ``tools`` to bind, ``mcp_servers`` apart, ``betas`` needed."""

    provider: str
    tool_entries: tuple[Mapping[str, Any], ...] = ()
    server_entries: tuple[Mapping[str, Any], ...] = ()
    beta_headers: tuple[str, ...] = ()
    skipped: tuple[SkippedServer, ...] = field(default=())

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Entries to bind next to the tools (a fresh copy)."""
        return [copy.deepcopy(dict(entry)) for entry in self.tool_entries]

    @property
    def mcp_servers(self) -> list[dict[str, Any]]:
        """Server entries a model takes apart from its tools (a fresh copy)."""
        return [copy.deepcopy(dict(entry)) for entry in self.server_entries]

    @property
    def betas(self) -> list[str]:
        """Beta headers the request needs."""
        return list(self.beta_headers)

    @property
    def connections(self) -> dict[str, dict[str, Any]]:
        """``{server_name: connection}``, as ``MultiServerMCPClient(config.connections)`` takes it.

        Only the "langchain" provider has connections (``{}`` for the others); each is
        its ``mcp_servers`` entry without ``name``, which the adapters refuse as a key.
        """
        if self.provider != "langchain":
            return {}
        connections = {}
        for entry in self.mcp_servers:
            name = entry.pop("name")
            connections[name] = entry
        return connections

    def langchain_connections(self) -> dict[str, dict[str, Any]]:
        """The same as :attr:`connections` (the earlier spelling)."""
        return self.connections

    def __bool__(self) -> bool:
        return bool(self.tool_entries or self.server_entries)

    def __repr__(self) -> str:
        # The entries carry resolved URLs, headers and tokens: name each by type and label.
        return (
            f"McpConfig(provider={self.provider!r}, tools={_labels(self.tool_entries)!r}, "
            f"mcp_servers={_labels(self.server_entries)!r}, betas={list(self.beta_headers)!r}, "
            f"skipped={list(self.skipped)!r})"
        )


def _labels(entries: tuple[Mapping[str, Any], ...]) -> list[str]:
    """``type:label`` of each provider entry: what it is, never what it carries."""
    labels = []
    for entry in entries:
        label = next((str(entry[key]) for key in ("server_label", "mcp_server_name", "name")
                      if isinstance(entry.get(key), str)), "?")
        labels.append(f"{entry.get('type', 'server')}:{label}")
    return labels


def mcp_config(
    provider: str,
    servers: tuple[ResolvedMcpServer, ...],
    *,
    unsupported_auth: UnsupportedAuth = "drop",
    beta: str | None = None,
) -> McpConfig:
    """The MCP configuration of ``servers`` for ``provider`` (empty with a warning if unknown).

    ``unsupported_auth`` is Anthropic's rule 3: "drop" attaches a server without the
    headers the connector cannot send (with a warning), "skip" leaves such a server out.
    ``beta`` picks the Anthropic connector version (default ``mcp-client-2025-11-20``).
    """
    check_unsupported_auth(unsupported_auth)
    if beta is not None and (provider != "anthropic" or beta not in ANTHROPIC_BETAS):
        raise ValueError(f"beta {beta!r} is not an MCP connector beta of provider {provider!r} "
                         f"(anthropic: {', '.join(ANTHROPIC_BETAS)})")
    if provider == "openai":
        return McpConfig("openai", tool_entries=tuple(_openai_entry(s) for s in servers))
    if provider == "anthropic":
        return _anthropic_config(servers, unsupported_auth, beta or ANTHROPIC_MCP_BETA)
    if provider == "langchain":
        return _langchain_config(servers)
    if servers:
        logger.warning(
            "MCP servers %s skipped: provider %r has no MCP support here (known: %s)",
            ", ".join(server.entry.server_label for server in servers), provider,
            ", ".join(PROVIDERS),
        )
    return McpConfig(provider)


def _openai_entry(server: ResolvedMcpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {
        key: thaw(value) for key, value in server.entry.extra.items() if key not in OPENAI_CORE_KEYS
    }
    require_approval = thaw(server.entry.require_approval)
    entry.update(
        type="mcp",
        server_label=server.entry.server_label,
        server_url=server.server_url,
        # OpenAI's own default, written out: approval stays required unless relaxed.
        require_approval="always" if require_approval is None else require_approval,
    )
    if server.headers:
        entry["headers"] = dict(server.headers)
    allowed_tools = pinned_allowed_tools(server)
    if allowed_tools is not None:
        entry["allowed_tools"] = allowed_tools
    return entry


def pinned_allowed_tools(server: ResolvedMcpServer) -> Any:
    """OpenAI's ``allowed_tools``: the capability's, narrowed to the pinned names when pinned.

    A list stays a list (in its own order), a filter keeps its other keys and gets
    ``tool_names`` narrowed (or set), and no allow-list becomes the pinned names, so a tool
    the server adds after review is never offered.
    """
    allowed = thaw(server.entry.allowed_tools)
    if server.entry.pins is None:
        return allowed
    pinned = [tool.name for tool in server.entry.pins]
    if allowed is None:
        return pinned
    if isinstance(allowed, dict):
        names = allowed.get("tool_names")
        kept = pinned if names is None else [name for name in names if name in pinned]
        return {**allowed, "tool_names": kept}
    return [name for name in allowed if name in pinned]


def _anthropic_config(
    servers: tuple[ResolvedMcpServer, ...], unsupported_auth: UnsupportedAuth, beta: str
) -> McpConfig:
    server_entries: list[dict[str, Any]] = []
    toolsets: list[dict[str, Any]] = []
    skipped: list[SkippedServer] = []
    names: set[str] = set()
    for server in servers:
        options = server.options()
        reason = anthropic_gate(options, unsupported_auth=unsupported_auth)
        if reason is None and server.entry.server_label in names:
            reason = "another server already uses this name: Anthropic needs unique names"
        if reason is not None:
            logger.warning(
                "MCP server %r (capability %s) skipped on Anthropic: %s",
                server.entry.server_label, server.code, reason,
            )
            skipped.append(SkippedServer(server.code, server.entry.server_label, reason))
            continue
        names.add(server.entry.server_label)
        dropped = anthropic_dropped_headers(options)
        if dropped is not None:
            logger.warning(
                "MCP server %r (capability %s) attached to Anthropic without some headers: %s",
                server.entry.server_label, server.code, dropped,
            )
        definition: dict[str, Any] = {
            "type": "url", "url": server.server_url, "name": server.entry.server_label,
        }
        token = bearer_token(options["headers"])
        if token is not None:
            definition["authorization_token"] = token
        toolset: dict[str, Any] = {
            "type": "mcp_toolset", "mcp_server_name": server.entry.server_label,
        }
        allowed = allowed_tool_names(options["allowed_tools"])
        pins = server.entry.pins
        if pins is not None:
            # Only the reviewed names, narrowed by the capability's allow-list when set.
            allowed = [tool.name for tool in pins if allowed is None
                       or options["allowed_tools"] is None or tool.name in allowed]
        if options["allowed_tools"] is not None or pins is not None:
            # An allow-list: everything off by default, the named tools on (an empty
            # list therefore enables nothing, as on OpenAI).
            toolset["default_config"] = {"enabled": False}
            toolset["configs"] = {name: {"enabled": True} for name in allowed or []}
        if pins is not None and beta == ANTHROPIC_PINNED_BETA:
            # The model is shown exactly the reviewed (and overridden) descriptors.
            toolset["tools"] = [_anthropic_pinned_tool(tool) for tool in pins
                                if tool.name in (allowed or [])]
        server_entries.append(definition)
        toolsets.append(toolset)
    return McpConfig(
        "anthropic",
        tool_entries=tuple(toolsets),
        server_entries=tuple(server_entries),
        beta_headers=(beta,) if server_entries else (),
        skipped=tuple(skipped),
    )


def _anthropic_pinned_tool(tool: PinnedToolEntry) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name, "input_schema": thaw(tool.shown_input_schema)}
    if tool.shown_description is not None:
        entry["description"] = tool.shown_description
    return entry


def _langchain_config(servers: tuple[ResolvedMcpServer, ...]) -> McpConfig:
    """Connections for langchain-mcp-adapters, of the servers their capability leaves open.

    The adapters offer every tool a server lists and call it unasked: they cannot enforce
    ``allowed_tools``, an approval or a pin. A server with any of these is left out (SPEC
    §9), with a reason naming ``toolset.client_mcp_tools()``, which enforces all three.
    """
    entries: list[dict[str, Any]] = []
    skipped: list[SkippedServer] = []
    for server in servers:
        reason = langchain_restriction(server)
        if reason is None:
            entries.append(_langchain_entry(server))
            continue
        logger.warning(
            "MCP server %r (capability %s) left out of the langchain connections: %s",
            server.entry.server_label, server.code, reason,
        )
        skipped.append(SkippedServer(server.code, server.entry.server_label, reason))
    return McpConfig("langchain", server_entries=tuple(entries), skipped=tuple(skipped))


def langchain_restriction(server: ResolvedMcpServer) -> str | None:
    """Why a raw adapters connection would widen ``server``'s capability, or None."""
    options = server.options()
    instead = ("langchain-mcp-adapters cannot enforce it, so a raw connection would offer "
               "more than the capability allows; use `await toolset.client_mcp_tools()`, "
               "which enforces it")
    if options["allowed_tools"] is not None:
        return f"[allowed_tools] the capability sets allowed_tools: {instead}"
    if options["require_approval"] != "never":
        return (f"[require_approval] require_approval is {options['require_approval']!r}, "
                f"not 'never': {instead}")
    if server.entry.pins is not None:
        return f"[pins] the server's tools are pinned by capc.lock: {instead}"
    return None


def _langchain_entry(server: ResolvedMcpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": server.entry.server_label,
        "transport": "streamable_http",
        "url": server.server_url,
    }
    if server.headers:
        entry["headers"] = dict(server.headers)
    return entry
