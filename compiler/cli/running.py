"""What the commands share once their flags are parsed: printing diagnostics and the exit
code they mean. The compile request and the one compile entry point are
:mod:`compiler.tree_compile`'s (re-exported here for the commands)."""

from __future__ import annotations

import sys

from compiler.diagnostics import Diagnostic
from compiler.errors import ExitCode
from compiler.report import REPORTERS
from compiler.tree_compile import CompileRequest, compile_options_for, compile_tree

__all__ = ["CompileRequest", "compile_options_for", "compile_tree", "failure_exit", "report"]


def report(diagnostics: tuple[Diagnostic, ...], output_format: str) -> None:
    """Print diagnostics with the chosen reporter (text on stderr, machine formats on stdout)."""
    stream = sys.stderr if output_format == "text" else sys.stdout
    REPORTERS[output_format]().report(diagnostics, stream)


def failure_exit(diagnostics: tuple[Diagnostic, ...]) -> int:
    """2 when a source could not be read (an I/O error, as documented), else 1."""
    # Imported here: a compile that succeeds (a cache hit above all) needs no YAML loader.
    from compiler.source.documents import IO

    unreadable = any(d.code == IO.id and d.is_error for d in diagnostics)
    return ExitCode.USAGE if unreadable else ExitCode.PROBLEMS
