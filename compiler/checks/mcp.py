"""Semantic checks of ``type: mcp`` capabilities, Anthropic's gating rules as warnings.

Codes: ``mcp-unknown-option`` (error: a key neither capc nor OpenAI's ``Mcp`` tool type
knows, with "did you mean", or one capc refuses), ``anthropic-gate`` (warning), and the
URL and header codes of
:mod:`compiler.checks.url_rules`.
"""

from __future__ import annotations

from typing import Any

from compiler.checks.url_rules import check_headers, check_plain_http_secrets, check_url
from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.normalize import MCP_KNOWN_OPTIONS
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.mcp.gating import anthropic_dropped_headers, anthropic_gate
from compiler.source.documents import SourceDocument

ANTHROPIC_GATE = Code(
    "anthropic-gate", "a gate on MCP tools that Anthropic's connector cannot enforce",
    Severity.WARNING)
MCP_UNKNOWN_OPTION = Code(
    "mcp-unknown-option", "an MCP capability has an option capc does not know")
CODES = (ANTHROPIC_GATE, MCP_UNKNOWN_OPTION)


def check_mcp(document: SourceDocument, allow_private_networks: bool,
              policy: EgressPolicy | None = None) -> list[Diagnostic]:
    """URL, headers and the Anthropic connector's rules for one MCP capability."""
    options: dict[str, Any] = document.data["options"]
    found = check_option_names(document, options)
    found += check_url(document, ("options", "server_url"), options["server_url"],
                       allow_private_networks, policy)
    found += check_headers(document, ("options", "headers"), options.get("headers") or {})
    found += check_plain_http_secrets(document, ("options", "server_url"),
                                      options["server_url"], options.get("headers") or {})
    reason = anthropic_gate(options)
    if reason is not None:
        found.append(Diagnostic.warning(
            document.location(("options",)), ANTHROPIC_GATE,
            f"Anthropic models will not get server {options.get('server_label')!r}: {reason}"))
        return found
    dropped = anthropic_dropped_headers(options)
    if dropped is not None:
        found.append(Diagnostic.warning(
            document.location(("options", "headers")), ANTHROPIC_GATE,
            f"Anthropic models will get server {options.get('server_label')!r} without "
            f"some of its headers: {dropped}"))
    return found


# The fields of OpenAI's Responses ``Mcp`` tool type that capc does not model itself; they
# pass through to OpenAI only (tests/adoption compares this with the installed SDK).
OPENAI_PASS_THROUGH_OPTIONS = ("allowed_callers", "connector_id", "defer_loading",
                               "server_description", "tunnel_id")
# Mcp fields capc refuses, and why: "type" is capc's to write; extras are sent as written,
# so a credential there would be a literal one in the tree.
OPENAI_REFUSED_OPTIONS = {
    "type": "capc writes the tool type itself",
    "authorization": "extras are sent as written, so the token would sit in the tree: send "
                     "it as a header, `Authorization: Bearer ${SETTING}`",
}


def check_option_names(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    """An error, with "did you mean", for each option key no consumer would read: a typo
    such as ``allowed_tool`` must not silently widen what the model may call."""
    known = (*MCP_KNOWN_OPTIONS, *OPENAI_PASS_THROUGH_OPTIONS)
    found = []
    for key in options:
        if key in known:
            continue
        if key in OPENAI_REFUSED_OPTIONS:
            found.append(Diagnostic.error(
                document.location(("options", key), key=True), MCP_UNKNOWN_OPTION,
                f"mcp option {key!r} is not accepted: {OPENAI_REFUSED_OPTIONS[key]}"))
            continue
        import difflib  # only an error's "did you mean" needs it
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        found.append(Diagnostic.error(
            document.location(("options", key), key=True), MCP_UNKNOWN_OPTION,
            f"unknown mcp option {str(key)!r}{hint} (capc's options and the fields of "
            f"OpenAI's Mcp tool: {', '.join(sorted(known))})"))
    return found
