"""The one value every check produces and every reporter consumes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.StrEnum):
    """How bad a diagnostic is; warnings fail the build only under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Location:
    """A 1-based position in a source file (path relative to the working directory)."""

    path: str
    line: int = 1
    col: int = 1


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """A located finding: ``PATH:LINE:COL: severity[CODE]: MESSAGE``."""

    path: str
    line: int
    col: int
    severity: Severity = field(compare=False)
    code: str
    message: str

    @classmethod
    def at(cls, location: Location, severity: Severity, code: str, message: str) -> Diagnostic:
        """Build a diagnostic at ``location``."""
        return cls(location.path, location.line, location.col, severity, code, message)

    @classmethod
    def error(cls, location: Location, code: str, message: str) -> Diagnostic:
        """An error at ``location``."""
        return cls.at(location, Severity.ERROR, code, message)

    @classmethod
    def warning(cls, location: Location, code: str, message: str) -> Diagnostic:
        """A warning at ``location``."""
        return cls.at(location, Severity.WARNING, code, message)

    @property
    def is_error(self) -> bool:
        """True for errors."""
        return self.severity is Severity.ERROR

    def as_dict(self) -> dict[str, object]:
        """The JSON reporter's shape."""
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
        }

    def escalated(self) -> Diagnostic:
        """The same finding as an error (``--strict``)."""
        return Diagnostic(self.path, self.line, self.col, Severity.ERROR, self.code, self.message)


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.is_error for d in diagnostics)
