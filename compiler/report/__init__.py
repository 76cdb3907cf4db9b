"""Reporters: one small protocol, chosen by name (adding SARIF is one more file)."""

from __future__ import annotations

from typing import Protocol, TextIO

from compiler.diagnostics import Diagnostic
from compiler.report.github import GithubReporter
from compiler.report.json_reporter import JsonReporter
from compiler.report.text import TextReporter


class Reporter(Protocol):
    """Writes a run's diagnostics to a stream (stderr for text, stdout for machine formats)."""

    def report(self, diagnostics: tuple[Diagnostic, ...], stream: TextIO) -> None:
        """Write every diagnostic, then a summary when the format has one."""


REPORTERS: dict[str, type[Reporter]] = {
    "text": TextReporter,
    "github": GithubReporter,
    "json": JsonReporter,
}

