"""``options.output_schema`` of an api capability and a ToolOverride's (SPEC §16), checked:
the problems :mod:`compiler.output_shaping` finds, located in their document.

Codes (declared in ``compiler.output_shaping``, which decides them for the manifest too):
``api-output-schema-size``, ``api-output-schema-invalid``, ``api-output-schema-pattern``,
``api-output-schema-max-items``, ``api-output-schema-unsupported`` and
``api-output-schema-dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.diagnostics import Diagnostic
from compiler.output_shaping import Path, declared_problems, shaped_output_schema
from compiler.source.documents import SourceDocument


def check_output_schema(document: SourceDocument, options: dict[str, Any]) -> list[Diagnostic]:
    """The located diagnostics of ``options.output_schema`` (none when it is absent)."""
    found = []
    for problem in shaped_output_schema(options).problems:
        at = document.location(_existing(document, problem.path))
        make = Diagnostic.error if problem.is_error else Diagnostic.warning
        found.append(make(at, problem.code, problem.message))
    return found


def check_override_output_schema(document: SourceDocument, key: str,
                                 schema: Any) -> list[Diagnostic]:
    """The located diagnostics of a ToolOverride's output schema (the tool's schema after
    ``key``, ``output_schema`` or ``output_schema_patch``): the same bounds and patterns
    as an api capability's, so the runtime never meets one it would refuse."""
    found = []
    for problem in declared_problems(schema, (key,)):
        if problem.path[-1:] == ("nullable",):  # an annotation for an override's consumers
            continue
        at = document.location(_existing(document, problem.path))
        make = Diagnostic.error if problem.is_error else Diagnostic.warning
        found.append(make(at, problem.code, problem.message))
    return found


def _existing(document: SourceDocument, path: Path) -> Path:
    """The longest prefix of ``path`` that is a node of ``document`` (for its location)."""
    node: Any = document.data
    for depth, step in enumerate(path):
        in_mapping = isinstance(node, Mapping) and step in node
        in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if not (in_mapping or in_list):
            return path[:depth]
        node = node[step]
    return path
