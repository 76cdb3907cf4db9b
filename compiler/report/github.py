"""GitHub Actions workflow commands, plus the full list in the step summary.

GitHub shows at most 10 annotations of each kind per step, so with ``$GITHUB_STEP_SUMMARY``
set every diagnostic also goes into the job summary as a Markdown table.
"""

from __future__ import annotations

import os
from typing import TextIO

from compiler.diagnostics import Diagnostic
from compiler.report.escape import escape_control

ANNOTATION_LIMIT = 10


def _escape_data(text: str) -> str:
    # Terminal controls first (CR included, shown as \x0d); then GitHub's own escaping, so
    # a newline in a message cannot start a second workflow command.
    text = escape_control(text, keep_newlines=True)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(diagnostic: Diagnostic) -> str:
    """``::error file=PATH,line=LINE,col=COL::MESSAGE`` for one diagnostic."""
    return (f"::{diagnostic.severity.value} file={_escape_property(diagnostic.path)},"
            f"line={diagnostic.line},col={diagnostic.col},"
            f"title={_escape_property(diagnostic.code)}::{_escape_data(diagnostic.message)}")


class GithubReporter:
    """Annotations on stdout; the complete table in ``$GITHUB_STEP_SUMMARY`` when set."""

    def report(self, diagnostics: tuple[Diagnostic, ...], stream: TextIO) -> None:
        """Write the workflow commands and append the summary table."""
        for diagnostic in diagnostics:
            stream.write(workflow_command(diagnostic) + "\n")
        summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_path and diagnostics:
            with open(summary_path, "a", encoding="utf-8") as summary:
                summary.write(step_summary(diagnostics))


def step_summary(diagnostics: tuple[Diagnostic, ...]) -> str:
    """The Markdown table of every diagnostic (GitHub caps annotations, not summaries)."""
    lines = ["## capc diagnostics", ""]
    if len(diagnostics) > ANNOTATION_LIMIT:
        lines += [f"{len(diagnostics)} diagnostics; GitHub annotates only the first "
                  f"{ANNOTATION_LIMIT} of each kind, so all are listed here.", ""]
    lines += ["| location | severity | code | message |", "| --- | --- | --- | --- |"]
    for d in diagnostics:
        message = escape_control(d.message).replace("|", "\\|")
        where = escape_control(d.path).replace("`", "'")
        lines.append(f"| `{where}:{d.line}:{d.col}` | {d.severity.value} | {d.code} | {message} |")
    return "\n".join(lines) + "\n\n"
