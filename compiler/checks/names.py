"""Uniqueness across the tree: capability codes and tool names."""

from __future__ import annotations

from collections.abc import Iterable

from compiler.checks.api import tool_name
from compiler.diagnostics import Diagnostic
from compiler.source.documents import SourceDocument

# A name, the document that uses it and the path of the use there.
Use = tuple[str, SourceDocument, tuple[str, ...]]


def _first_seen(items: Iterable[Use], code: str, what: str) -> list[Diagnostic]:
    # Documents, not locations: a location is looked up only for a duplicate (and its
    # first use), not for every name of the tree.
    first: dict[str, tuple[SourceDocument, tuple[str, ...]]] = {}
    found = []
    for name, document, path in items:
        if name in first:
            first_document, first_path = first[name]
            seen = first_document.location(first_path)
            found.append(Diagnostic.error(document.location(path), code,
                                          f"{what} {name!r} is already defined at "
                                          f"{seen.path}:{seen.line}:{seen.col}"))
        else:
            first[name] = (document, path)
    return found


def check_unique_names(capabilities: list[SourceDocument]) -> list[Diagnostic]:
    """Second and later uses of a capability code, api tool name or MCP server label
    (providers key servers by label), each pointing at the first."""
    codes: Iterable[Use] = ((doc.data["code"], doc, ("code",)) for doc in capabilities)
    tools: Iterable[Use] = (
        (tool_name(doc.data), doc,
         ("options", "name") if "name" in doc.data["options"] else ("code",))
        for doc in capabilities if doc.data["type"] == "api"
    )
    labels: Iterable[Use] = ((doc.data["options"]["server_label"], doc,
                              ("options", "server_label"))
                             for doc in capabilities if doc.data["type"] == "mcp")
    return [*_first_seen(codes, "duplicate-code", "capability code"),
            *_first_seen(tools, "duplicate-tool-name", "tool name"),
            *_first_seen(labels, "duplicate-server-label", "MCP server_label")]
