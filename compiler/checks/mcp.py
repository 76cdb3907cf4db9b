"""Semantic checks of ``type: mcp`` capabilities, Anthropic's gating rules as warnings."""

from __future__ import annotations

from typing import Any

from compiler.checks.urls import check_headers, check_plain_http_secrets, check_url
from compiler.diagnostics import Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.mcp.gating import anthropic_dropped_headers, anthropic_gate
from compiler.source.documents import SourceDocument


def check_mcp(document: SourceDocument, allow_private_networks: bool,
              policy: EgressPolicy | None = None) -> list[Diagnostic]:
    """URL, headers and the Anthropic connector's rules for one MCP capability."""
    options: dict[str, Any] = document.data["options"]
    found = check_url(document, ("options", "server_url"), options["server_url"],
                      allow_private_networks, policy)
    found += check_headers(document, ("options", "headers"), options.get("headers") or {})
    found += check_plain_http_secrets(document, ("options", "server_url"),
                                      options["server_url"], options.get("headers") or {})
    reason = anthropic_gate(options)
    if reason is not None:
        found.append(Diagnostic.warning(
            document.location(("options",)), "anthropic-gate",
            f"Anthropic models will not get server {options.get('server_label')!r}: {reason}"))
        return found
    dropped = anthropic_dropped_headers(options)
    if dropped is not None:
        found.append(Diagnostic.warning(
            document.location(("options", "headers")), "anthropic-gate",
            f"Anthropic models will get server {options.get('server_label')!r} without "
            f"some of its headers: {dropped}"))
    return found
