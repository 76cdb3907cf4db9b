"""Uniqueness across the tree: capability codes and tool names."""

from __future__ import annotations

from collections.abc import Iterable

from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.manifest.model import tool_name, tool_name_path
from compiler.source.documents import SourceDocument

DUPLICATE_CODE = Code("duplicate-code", "two capabilities share a code")
DUPLICATE_SERVER_LABEL = Code("duplicate-server-label", "two MCP capabilities share a server_label")
DUPLICATE_TOOL_NAME = Code("duplicate-tool-name", "two tools share a name")
CODES = (DUPLICATE_CODE, DUPLICATE_SERVER_LABEL, DUPLICATE_TOOL_NAME)

# A name, the document that uses it and the path of the use there.
Use = tuple[str, SourceDocument, tuple[str, ...]]


def _first_seen(items: Iterable[Use], code: Code, what: str) -> list[Diagnostic]:
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
    # One pass over the documents for the three names (each pass touches every document).
    codes: list[Use] = []
    tools: list[Use] = []
    labels: list[Use] = []
    for doc in capabilities:
        data = doc.data
        codes.append((data["code"], doc, ("code",)))
        if data["type"] == "api":
            tools.append((tool_name(data), doc, tool_name_path(data["options"])))
        elif data["type"] == "mcp":
            labels.append((data["options"]["server_label"], doc, ("options", "server_label")))
    return [*_first_seen(codes, DUPLICATE_CODE, "capability code"),
            *_first_seen(tools, DUPLICATE_TOOL_NAME, "tool name"),
            *_first_seen(labels, DUPLICATE_SERVER_LABEL, "MCP server_label")]
