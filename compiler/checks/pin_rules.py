"""MCP capabilities against the lock (``capc.lock``), when the tree has one.

Codes: ``mcp-unpinned`` (warning: the server is not in the lock), ``mcp-tool-unpinned``
(error: an ``allowed_tools`` name the lock does not pin), ``mcp-pin-url-mismatch`` (error:
the lock pinned another URL for this label). Without a lock nothing here runs; with
``unpinned: REASON`` a server absent from the lock is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.runtime.manifest.fields import freeze
from compiler.runtime.manifest.pinned import PinnedToolEntry
from compiler.runtime.mcp.gating import allowed_tool_names
from compiler.source.documents import SourceDocument

if TYPE_CHECKING:  # a type only: the lock's reader is imported when a lock is read
    from compiler.pins.lockfile import LockedServer

MCP_PIN_URL_MISMATCH = Code("mcp-pin-url-mismatch", "the lock pins the MCP server at another URL")
MCP_TOOL_UNPINNED = Code("mcp-tool-unpinned", "the lock has no pin for an allowed MCP tool")
MCP_UNPINNED = Code("mcp-unpinned", "an MCP server is not pinned in the lock", Severity.WARNING)
CODES = (MCP_PIN_URL_MISMATCH, MCP_TOOL_UNPINNED, MCP_UNPINNED)


def check_pins(document: SourceDocument, lock: Mapping[str, LockedServer],
               lock_path: str) -> list[Diagnostic]:
    """One MCP capability against the lock."""
    options: dict[str, Any] = document.data["options"]
    label = options["server_label"]
    server = lock.get(label)
    if server is None and options.get("unpinned"):
        return []  # a documented exception: the reason is in the manifest for review
    if server is None:
        return [Diagnostic.warning(
            document.location(("options", "server_label")), MCP_UNPINNED,
            f"server {label!r} is not pinned in {lock_path}: its tools can change after "
            "review; run `capc lock`")]
    if server.server_url != options["server_url"]:
        return [Diagnostic.error(
            document.location(("options", "server_url")), MCP_PIN_URL_MISMATCH,
            f"{lock_path} pins server {label!r} at {server.server_url}, not at this URL: "
            "run `capc lock` and review the listing")]
    allowed = options.get("allowed_tools")
    names = allowed_tool_names(allowed)
    if not names:
        return []
    path: tuple[str | int, ...] = ("options", "allowed_tools")
    if isinstance(allowed, Mapping):
        path = (*path, "tool_names")
    pinned = server.tool_names()
    found = []
    for index, name in enumerate(names):
        if name in pinned:
            continue
        import difflib  # only an error's "did you mean" needs it
        close = difflib.get_close_matches(name, pinned, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        found.append(Diagnostic.error(
            document.location((*path, index)), MCP_TOOL_UNPINNED,
            f"server {label!r} has no pinned tool {name!r} in {lock_path}{hint}"))
    return found


def pinned_tools(server: LockedServer) -> tuple[PinnedToolEntry, ...]:
    """The manifest's ``mcp.pins`` tools of a locked server: descriptors and digests."""
    return tuple(PinnedToolEntry(
        name=str(tool["name"]), digest=str(tool["digest"]), description=tool.get("description"),
        input_schema=freeze(tool.get("input_schema") or {}),
        annotations=freeze(tool.get("annotations"))) for tool in server.tools)
