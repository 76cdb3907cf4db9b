"""An MCP capability resolved for one context: its settings, headers and server URL.

``Manifest.resolve`` (``compiler.runtime.loader``) hands each ``mcp`` capability here. The
provider or an MCP client connects to the server, not capc's transport, so everything is
checked on the text: headers (the runtime's header rules), the URL's settings substituted
the way api URLs' are, then the compiler's URL rules and the address policy on the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.runtime.api.request import substitute_url_settings
from compiler.runtime.context import RuntimeContext
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.headers import breaks_header, configured_header_problem
from compiler.runtime.egress.urls import url_problem
from compiler.runtime.errors import CapabilityUnavailable, UnsafeSettingError
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import CapabilityEntry, McpServerEntry
from compiler.runtime.placeholders import parse_template, render, resolve_string, setting_names


@dataclass(frozen=True, slots=True)
class ResolvedMcpServer:
    """An MCP capability with this context's settings in its URL and headers."""

    code: str
    entry: McpServerEntry
    server_url: str
    headers: Mapping[str, str]

    def __repr__(self) -> str:
        # The resolved URL and header values hold settings (secrets): show the reviewed
        # template from the manifest and the header names only, as StaticSettings does.
        return (
            f"ResolvedMcpServer(code={self.code!r}, server_label={self.entry.server_label!r}, "
            f"server_url={self.entry.server_url!r}, headers={sorted(self.headers)!r})"
        )

    def options(self) -> dict[str, Any]:
        """The server as manifest options, resolved (what the gating rules read)."""
        return {
            "server_label": self.entry.server_label,
            "server_url": self.server_url,
            "require_approval": thaw(self.entry.require_approval),
            "headers": dict(self.headers),
            "allowed_tools": thaw(self.entry.allowed_tools),
        }


async def resolve_server(
    capability: CapabilityEntry, ctx: RuntimeContext, policy: EgressPolicy
) -> ResolvedMcpServer:
    """The MCP server of ``capability`` for ``ctx``; CapabilityUnavailable or
    UnsafeSettingError (the capability is skipped) when it cannot be offered safely."""
    entry = capability.mcp
    assert entry is not None
    names = {*entry.placeholders, *setting_names(entry.server_url)}
    for value in entry.headers.values():
        names.update(setting_names(value))
    settings = await ctx.resolve_settings(names)
    headers = {}
    for name, template in entry.headers.items():
        problem = configured_header_problem(name)
        if problem is not None:
            raise CapabilityUnavailable(f"MCP {problem}")
        value = resolve_string(template, settings)
        if breaks_header(name + value):
            raise UnsafeSettingError(
                f"MCP header {name!r} would contain a CR, LF or NUL character after its "
                "settings were substituted"
            )
        headers[name] = value
    # As for api URLs: a host setting may only be a host, path and query settings are
    # percent-encoded so they cannot add segments' delimiters or parameters.
    try:
        server_url = render(
            substitute_url_settings(parse_template(entry.server_url), settings), _no_slot
        )
    except UnsafeSettingError as error:
        raise CapabilityUnavailable(f"the MCP server URL is refused: {error}") from None
    _check_server_url(server_url, policy)
    return ResolvedMcpServer(
        code=capability.code,
        entry=entry,
        server_url=server_url,
        headers=headers,
    )


def _no_slot(name: str) -> str:
    raise CapabilityUnavailable(f"the MCP server URL has an argument slot {{{name}}}")


def _check_server_url(url: str, policy: EgressPolicy) -> None:
    """The resolved server URL under the compiler's URL rules and the address policy.

    The provider or an MCP client connects to it, not capc's transport, so its text is
    all that can be checked: every rule the compiler applies to a literal URL (backslash,
    user information, control characters, host spellings) and the policy on its host.
    """
    problem = url_problem(url, policy)
    if problem is not None:
        raise CapabilityUnavailable(f"the MCP server URL is refused: {problem.reason}")
