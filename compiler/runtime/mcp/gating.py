"""The four fail-closed rules that decide whether an MCP server can be given to Claude.

Anthropic's MCP connector is narrower than OpenAI's. A server that would break every
request, or whose restrictions cannot be carried over, is left out rather than attached
in a wider or broken form. The compiler calls :func:`anthropic_gate` to warn at compile
time; the loader calls it again at boot, after settings are resolved.

1. ``require_approval`` is exactly ``"never"`` (Anthropic has no approval flow).
2. ``server_url`` and ``server_label`` are both set.
3. Authentication is at most one ``Authorization: Bearer TOKEN`` header. Other headers
   and schemes cannot be sent: as the reference does, they are *dropped with a warning*
   and the server is attached without them (:func:`anthropic_dropped_headers`). With
   ``unsupported_auth="skip"`` such a server is skipped instead.
4. ``allowed_tools``, if set, is a list of tool names (or OpenAI's ``{"tool_names": [...]}``
   filter); anything else could widen the restriction, so the server is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

UnsupportedAuth = Literal["drop", "skip"]
UNSUPPORTED_AUTH_CHOICES: tuple[UnsupportedAuth, ...] = ("drop", "skip")

RULE_APPROVAL = "require_approval"
RULE_ENDPOINT = "endpoint"
RULE_AUTHENTICATION = "authentication"
RULE_ALLOWED_TOOLS = "allowed_tools"


def anthropic_gate(
    server: Mapping[str, Any], *, unsupported_auth: UnsupportedAuth = "drop"
) -> str | None:
    """Why ``server`` (manifest ``mcp`` options) cannot go to Anthropic, or None when it can.

    Rule 3 skips only under ``unsupported_auth="skip"``; by default unsupported headers
    are dropped (see :func:`anthropic_dropped_headers`) and the server passes.
    """
    check_unsupported_auth(unsupported_auth)
    approval = server.get("require_approval")
    if approval != "never":
        shown = ("is not set" if approval is None
                 else f"is {approval!r}, not 'never'" if isinstance(approval, str)
                 else f"is {_as_json(approval)}, not 'never'")
        return (
            f"[{RULE_APPROVAL}] require_approval {shown}: Anthropic has "
            "no approval flow; set require_approval: never to use this server with Claude"
        )
    if not _non_empty_string(server.get("server_url")) or not _non_empty_string(
        server.get("server_label")
    ):
        return (
            f"[{RULE_ENDPOINT}] server_url and server_label must both be set: "
            "every request would fail without them"
        )
    authentication_problem = _authentication_problem(server.get("headers") or {})
    if authentication_problem and unsupported_auth == "skip":
        return f"[{RULE_AUTHENTICATION}] {authentication_problem}"
    if allowed_tool_names(server.get("allowed_tools")) is None:
        return (
            f"[{RULE_ALLOWED_TOOLS}] allowed_tools {_as_json(server.get('allowed_tools'))} is "
            "not a list of tool names: attaching the server could widen the restriction"
        )
    return None


def _as_json(value: Any) -> str:
    """A manifest value as its JSON text (never a Python repr such as None or a proxy)."""
    import json

    def plain(item: Any) -> Any:
        if isinstance(item, Mapping):
            return {str(key): plain(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [plain(inner) for inner in item]
        return item

    return json.dumps(plain(value), ensure_ascii=False, sort_keys=True, default=str)


def check_unsupported_auth(unsupported_auth: str) -> None:
    """ValueError unless ``unsupported_auth`` is "drop" or "skip"."""
    if unsupported_auth not in UNSUPPORTED_AUTH_CHOICES:
        raise ValueError(
            f"unsupported_auth must be one of {', '.join(UNSUPPORTED_AUTH_CHOICES)}, "
            f"not {unsupported_auth!r}"
        )


def anthropic_dropped_headers(server: Mapping[str, Any]) -> str | None:
    """What rule 3 drops from ``server`` when it is attached to Anthropic, or None.

    The text names the headers (never their values) and starts with ``[authentication]``.
    """
    problem = _authentication_problem(server.get("headers") or {})
    if problem is None:
        return None
    return (
        f"[{RULE_AUTHENTICATION}] {problem}; attached without them "
        '(toolset.mcp("anthropic", unsupported_auth="skip") skips such a server instead)'
    )


def bearer_token(headers: Mapping[str, Any]) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None."""
    for name, value in headers.items():
        if str(name).lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def allowed_tool_names(allowed_tools: Any) -> list[str] | None:
    """``allowed_tools`` as a list of names ([] when unset); None when it cannot be read so."""
    if allowed_tools is None:
        return []
    if isinstance(allowed_tools, Mapping):
        if set(allowed_tools) != {"tool_names"}:
            return None
        allowed_tools = allowed_tools["tool_names"]
    if isinstance(allowed_tools, str | bytes) or not isinstance(allowed_tools, Sequence):
        return None
    if not all(_non_empty_string(name) for name in allowed_tools):
        return None
    return list(allowed_tools)


def _authentication_problem(headers: Any) -> str | None:
    if not isinstance(headers, Mapping):
        return "headers must be a mapping"
    problems = []
    others = sorted(str(name) for name in headers if str(name).lower() != "authorization")
    if others:
        problems.append(
            f"header(s) {', '.join(others)} cannot be sent: Anthropic accepts a single "
            "'Authorization: Bearer' token only"
        )
    has_authorization = len(others) < len(headers)
    if has_authorization and bearer_token(headers) is None:
        problems.append(
            "the Authorization header is not a Bearer token: Anthropic accepts only Bearer"
        )
    return "; ".join(problems) or None


def _non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())
