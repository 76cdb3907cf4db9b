"""The one error an OpenAPI import raises: located diagnostics that stop it, nothing written."""

from __future__ import annotations

from compiler.diagnostics import Diagnostic
from compiler.errors import ExitCode


class ImportRefused(Exception):
    """The document cannot be imported; ``diagnostics`` say where and why (all located).

    ``exit_code``: 1 for a problem found in the document, 2 when SPEC itself cannot be read
    (missing, not a regular file, unreadable), as every command exits for such a file.
    """

    def __init__(self, diagnostics: tuple[Diagnostic, ...],
                 exit_code: int = ExitCode.PROBLEMS) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.exit_code = exit_code


def pointer_of(parts: tuple[str | int, ...]) -> str:
    """The RFC 6901 JSON pointer of a path (``#/paths/~1pets/get``)."""
    escaped = (str(part).replace("~", "~0").replace("/", "~1") for part in parts)
    return "#/" + "/".join(escaped) if parts else "#"


def parts_of(pointer: str) -> tuple[str, ...]:
    """The path of a JSON pointer fragment (the part after ``#``), unescaped."""
    if not pointer or pointer == "/":
        return () if not pointer else ("",)
    return tuple(part.replace("~1", "/").replace("~0", "~")
                 for part in pointer.removeprefix("/").split("/"))
