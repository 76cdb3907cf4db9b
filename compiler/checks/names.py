"""Uniqueness across the tree: capability codes and tool names."""

from __future__ import annotations

from collections.abc import Iterable

from compiler.checks.api import tool_name
from compiler.diagnostics import Diagnostic, Location
from compiler.source.documents import SourceDocument


def _first_seen(
    items: Iterable[tuple[str, Location]], code: str, what: str
) -> list[Diagnostic]:
    first: dict[str, Location] = {}
    found = []
    for name, location in items:
        if name in first:
            seen = first[name]
            found.append(Diagnostic.error(location, code,
                                          f"{what} {name!r} is already defined at "
                                          f"{seen.path}:{seen.line}:{seen.col}"))
        else:
            first[name] = location
    return found


def check_unique_names(capabilities: list[SourceDocument]) -> list[Diagnostic]:
    """Second and later uses of a capability code, api tool name or MCP server label
    (providers key servers by label), each pointing at the first."""
    codes = ((doc.data["code"], doc.location(("code",))) for doc in capabilities)
    tools = (
        (tool_name(doc.data),
         doc.location(("options", "name") if "name" in doc.data["options"] else ("code",)))
        for doc in capabilities if doc.data["type"] == "api"
    )
    labels = ((doc.data["options"]["server_label"], doc.location(("options", "server_label")))
              for doc in capabilities if doc.data["type"] == "mcp")
    return [*_first_seen(codes, "duplicate-code", "capability code"),
            *_first_seen(tools, "duplicate-tool-name", "tool name"),
            *_first_seen(labels, "duplicate-server-label", "MCP server_label")]
