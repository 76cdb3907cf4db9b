"""Which tools an endpoint offers one caller: resolved as ``resolve_profile`` resolves them.

A listing resolves the whole profile for the caller's context (conditions, settings,
pins), plus the proxied MCP tools its pinned servers still list as reviewed. A call
resolves only what can hold the name asked for: the one api capability whose reviewed
tool has that name, else the profile's plugin and MCP capabilities, so a call costs
what its tool costs, not what the profile does.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compiler.runtime.mcp.sessions import needs_approval
from compiler.runtime.provenance import CAPABILITY_KEY
from compiler.runtime.serve.listing import ServedTool, served_tools

if TYPE_CHECKING:
    from compiler.runtime.context import RuntimeContext
    from compiler.runtime.loader import Manifest
    from compiler.runtime.toolset import Toolset

_API_NAMES: weakref.WeakKeyDictionary[Any, Mapping[str, str]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class EndpointTools:
    """What one endpoint serves: a profile's capabilities, or the whole manifest."""

    profile: str | None
    mcp_timeout: float = 30.0

    def codes(self, manifest: Manifest) -> Sequence[str]:
        """The capability codes behind the endpoint, in the profile's order."""
        if self.profile is None:
            return manifest.codes()
        return tuple(manifest.data.profiles[self.profile].capabilities)

    async def listing(self, manifest: Manifest, ctx: RuntimeContext) -> tuple[ServedTool, ...]:
        """Every tool the endpoint lists for ``ctx``, sorted by name."""
        if self.profile is None:
            toolset = await manifest.resolve(manifest.codes(), ctx)
        else:
            toolset = await manifest.resolve_profile(self.profile, ctx)
        return await self._served(manifest, toolset)

    async def find(self, manifest: Manifest, ctx: RuntimeContext,
                   name: str) -> ServedTool | None:
        """The tool ``name`` as this endpoint would list it for ``ctx``, or None."""
        codes = self.codes(manifest)
        api_code = api_tool_codes(manifest).get(name)
        if api_code is not None and api_code in codes:
            wanted: list[str] = [api_code]
        else:
            wanted = [code for code in codes
                      if (entry := manifest.capability(code)) is not None
                      and entry.type != "api"]
        if not wanted:
            return None
        toolset = await manifest.resolve(wanted, ctx, profile=self.profile)
        for served in await self._served(manifest, toolset, only=name):
            if served.name == name:
                return served
        return None

    async def _served(self, manifest: Manifest, toolset: Toolset,
                      only: str | None = None) -> tuple[ServedTool, ...]:
        tools = list(toolset.tools)
        gated: set[str] = set()
        if toolset.mcp_server_entries and not any(tool.name == only for tool in tools):
            client = await toolset.client_mcp_tools(timeout=self.mcp_timeout)
            servers = {server.code: server for server in toolset.mcp_server_entries}
            for tool in client.tools:
                server = servers.get(str((tool.metadata or {}).get(CAPABILITY_KEY)))
                if server is not None and needs_approval(
                        server.options()["require_approval"], tool.name):
                    gated.add(tool.name)
            tools += client.tools
        return served_tools(tools, manifest, manifest.digest, frozenset(gated))


def api_tool_codes(manifest: Manifest) -> Mapping[str, str]:
    """Reviewed api tool name -> capability code, computed once per loaded manifest."""
    found = _API_NAMES.get(manifest)
    if found is None:
        found = {}
        for code in manifest.codes():
            entry = manifest.capability(code)
            if entry is not None and entry.type == "api" and entry.tool is not None:
                found.setdefault(entry.tool.descriptor().name, code)
        _API_NAMES[manifest] = found
    return found
