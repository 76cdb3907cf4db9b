"""Sources: find files, render templates, strict-load YAML with positions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.diagnostics import Diagnostic
from compiler.source.discovery import SourceFile, discover
from compiler.source.documents import SourceDocument, read_source

__all__ = ["SourceDocument", "SourceFile", "discover", "load_files"]


def load_files(
    files: list[SourceFile], variables: Mapping[str, Any] | None = None
) -> tuple[list[SourceDocument], list[Diagnostic]]:
    """Every document of ``files`` in order (sorted path, then document order)."""
    documents: list[SourceDocument] = []
    diagnostics: list[Diagnostic] = []
    for source in files:
        loaded, problems = read_source(source, variables or {})
        documents += loaded
        diagnostics += problems
    return documents, diagnostics
