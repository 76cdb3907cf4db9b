"""The lock file (``capc.lock``): what each MCP server listed when it was reviewed.

Deterministic JSON, ``json.dumps(sort_keys=True, indent=2, ensure_ascii=False)`` plus a
final newline::

    {"lock_version": 1,
     "servers": {"LABEL": {"server_url": "https://…/${TOKEN}",      # as written
                           "tools": [{"name", "description", "input_schema",
                                      "annotations"?, "digest"}, …]}}}   # sorted by name

``server_url`` keeps its placeholders, and nothing resolved from settings is ever written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.runtime.mcp.pins import PINNED_FIELDS, tool_digest

LOCK_INVALID = Code("lock-invalid", "the lock file is not a valid capc lock")
LOCK_UNREADABLE = Code("lock-unreadable", "the lock file cannot be read")
CODES = (LOCK_INVALID, LOCK_UNREADABLE)

LOCK_VERSION = 1


@dataclass(frozen=True, slots=True)
class LockedServer:
    """One server of the lock: its URL as written and its pinned tools, sorted by name."""

    server_url: str
    tools: tuple[Mapping[str, Any], ...]

    def tool_names(self) -> list[str]:
        """The pinned tool names, sorted."""
        return [str(tool["name"]) for tool in self.tools]

    def tool(self, name: str) -> Mapping[str, Any] | None:
        """The pinned tool ``name``, or None."""
        return next((tool for tool in self.tools if tool["name"] == name), None)


def lock_document(servers: Mapping[str, LockedServer]) -> dict[str, Any]:
    """The JSON document of a lock (tools sorted by name, each with its digest)."""
    return {
        "lock_version": LOCK_VERSION,
        "servers": {
            label: {"server_url": server.server_url,
                    "tools": sorted((dict(tool) for tool in server.tools),
                                    key=lambda tool: str(tool["name"]))}
            for label, server in sorted(servers.items())
        },
    }


def dump_lock(servers: Mapping[str, LockedServer]) -> bytes:
    """The lock file's bytes."""
    text = json.dumps(lock_document(servers), sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def lock_key(servers: Mapping[str, LockedServer] | None) -> str:
    """A canonical text of a lock's content (the compile cache keys on it)."""
    return "" if servers is None else dump_lock(servers).decode("utf-8")


def read_lock(path: str) -> tuple[dict[str, LockedServer] | None, list[Diagnostic]]:
    """The servers of the lock at ``path``, or None and located errors saying what is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return None, [Diagnostic.error(Location(path), LOCK_UNREADABLE, f"cannot read: {reason}")]
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return None, [Diagnostic.error(Location(path, error.lineno, error.colno), LOCK_INVALID,
                                       f"not JSON: {error.msg}")]
    try:
        return parse_lock(document), []
    except (KeyError, TypeError, ValueError) as error:
        message = str(error).strip("'\"")
        return None, [Diagnostic.error(Location(path), LOCK_INVALID,
                                       f"not a capc lock: {message}; re-run `capc lock`")]


def parse_lock(document: Any) -> dict[str, LockedServer]:
    """A lock document as LockedServers; ValueError/KeyError/TypeError on a bad shape."""
    if not isinstance(document, dict) or document.get("lock_version") != LOCK_VERSION:
        raise ValueError(f"lock_version must be {LOCK_VERSION}")
    servers: dict[str, LockedServer] = {}
    for label, server in document["servers"].items():
        if not isinstance(server["server_url"], str) or not isinstance(server["tools"], list):
            raise ValueError(f"server {label!r}: server_url must be text and tools a list")
        tools = []
        for tool in server["tools"]:
            if set(tool) - {*PINNED_FIELDS, "digest"} or not isinstance(tool["name"], str):
                raise ValueError(f"server {label!r}: a tool has unknown fields or no name")
            if tool["digest"] != tool_digest(tool):
                raise ValueError(f"server {label!r}, tool {tool['name']!r}: the digest does "
                                 "not match the descriptor (edited by hand?)")
            tools.append(dict(tool))
        servers[str(label)] = LockedServer(server["server_url"], tuple(tools))
    return servers
