"""The one error an OpenAPI import raises: located diagnostics that stop it, nothing written."""

from __future__ import annotations

from compiler.diagnostics import Diagnostic


class ImportRefused(Exception):
    """The document cannot be imported; ``diagnostics`` say where and why (all located)."""

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


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
