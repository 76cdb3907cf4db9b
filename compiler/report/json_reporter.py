"""A JSON list of ``{path, line, col, severity, code, message}`` objects."""

from __future__ import annotations

import json
from typing import TextIO

from compiler.diagnostics import Diagnostic


class JsonReporter:
    """Machine-readable diagnostics."""

    def report(self, diagnostics: tuple[Diagnostic, ...], stream: TextIO) -> None:
        """Write the whole list as one JSON document."""
        json.dump([d.as_dict() for d in diagnostics], stream, indent=2, ensure_ascii=False)
        stream.write("\n")
