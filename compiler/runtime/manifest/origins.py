"""Where a manifest entry came from: a source location, and the overrides applied to a tool.

Its own module because both the capability entries (``model``) and the pinned MCP tools
(``pinned``) record provenance, and neither may import the other's module for it (a
circle; tests/unit/test_import_graph.py finds any).
"""

from __future__ import annotations

from typing import Any

from compiler.runtime.manifest.fields import (
    BUILD,
    JsonObject,
    ParseMode,
    json_object,
    line_number,
    string_or,
    strings,
)
from compiler.runtime.records import record


@record(frozen=True, slots=True)
class SourceLocation:
    """Where an entry was written: a POSIX path relative to the compile's directory."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    @classmethod
    def parse(cls, raw: Any, where: str = "source", mode: ParseMode = BUILD) -> SourceLocation:
        """The location of a ``{"path", "line"}`` object (absent keys: ``?`` and 0)."""
        if raw.__class__ is dict:  # the common case, checked without helper calls
            path, line = raw.get("path", "?"), raw.get("line", 0)
            if path.__class__ is str and line.__class__ is int:
                return mode.make(cls, path, line)
        raw = json_object({} if raw is None else raw, where)
        return mode.make(cls, string_or(raw, "path", "?"), line_number(raw))

    def to_json(self) -> JsonObject:
        """``{"path", "line"}``."""
        return {"path": self.path, "line": self.line}


@record(frozen=True, slots=True)
class AppliedOverride:
    """A ToolOverride the compiler applied to an api tool: where, and which fields."""

    path: str
    line: int
    fields: tuple[str, ...]

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> AppliedOverride:
        """The record of one applied override."""
        raw = json_object(raw, "tool.overrides[]")
        return mode.make(cls, string_or(raw, "path", "?"), line_number(raw), strings(raw, "fields"))

    def to_json(self) -> JsonObject:
        """``{"path", "line", "fields"}``."""
        return {"path": self.path, "line": self.line, "fields": list(self.fields)}
