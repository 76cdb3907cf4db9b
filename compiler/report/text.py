"""``PATH:LINE:COL: error[CODE]: MESSAGE`` lines, then a summary line."""

from __future__ import annotations

from typing import TextIO

from compiler.diagnostics import Diagnostic
from compiler.report.escape import escape_control


def format_diagnostic(diagnostic: Diagnostic) -> str:
    """One diagnostic in the compiler-style line format of SPEC §4, always one line:
    control characters of the path and message (a file name or YAML text) are escaped."""
    return escape_control(f"{diagnostic.path}:{diagnostic.line}:{diagnostic.col}: "
                          f"{diagnostic.severity.value}[{diagnostic.code}]: "
                          f"{diagnostic.message}")


class TextReporter:
    """Human-readable lines, one per diagnostic."""

    def report(self, diagnostics: tuple[Diagnostic, ...], stream: TextIO) -> None:
        """Write each line and the summary."""
        for diagnostic in diagnostics:
            stream.write(format_diagnostic(diagnostic) + "\n")
        stream.write(summary_line(diagnostics) + "\n")


def summary_line(diagnostics: tuple[Diagnostic, ...]) -> str:
    """``N errors, M warnings`` (or ``no problems found``)."""
    errors = sum(1 for d in diagnostics if d.is_error)
    warnings = len(diagnostics) - errors
    if not diagnostics:
        return "no problems found"
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
