"""The I/O edge of compiling: read the tree and the variables, run the pure pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from compiler.pipeline import CompileOptions, CompileResult, compile_documents
from compiler.source import discover, load_files


def build(
    roots: Sequence[str], variable_files: Sequence[str] = (), options: CompileOptions | None = None,
    cwd: Path | None = None,
) -> CompileResult:
    """Compile every source under ``roots``; diagnostics cover loading and checking alike."""
    files = discover(list(roots), cwd)
    variables: dict[str, object] = {}
    found = []
    if variable_files:
        from compiler.source.templates import load_template_variables

        variables, variable_problems = load_template_variables(list(variable_files))
        found += variable_problems
    documents, load_problems = load_files(files, variables)
    found += load_problems
    result = compile_documents(documents, options)
    if not found:
        return result
    diagnostics = tuple(sorted(set(found) | set(result.diagnostics)))
    if options is not None and options.strict:
        diagnostics = tuple(sorted({d.escalated() for d in diagnostics}))
    manifest = result.manifest if not any(d.is_error for d in diagnostics) else None
    return replace(result, manifest=manifest, diagnostics=diagnostics)
