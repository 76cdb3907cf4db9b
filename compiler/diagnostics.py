"""The one value every check produces and every reporter consumes."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from compiler.runtime.records import record


class Severity(enum.StrEnum):
    """How bad a diagnostic is; warnings fail the build only under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@record(frozen=True, slots=True)
class Code:
    """A diagnostic code, declared once by the module that emits it.

    ``id`` is what reports print (``error[ID]``), ``summary`` one line for listings, and
    ``severity`` the one it is usually reported with (``--strict`` and a few checks that
    choose per finding may report it otherwise). compiler/diagnostic_codes.py lists them all.
    """

    id: str
    summary: str
    severity: Severity = Severity.ERROR


@record(frozen=True, slots=True)
class Location:
    """A 1-based position in a source file (path relative to the working directory)."""

    path: str
    line: int = 1
    col: int = 1


@record(frozen=True, slots=True)
class Diagnostic:
    """A located finding: ``PATH:LINE:COL: severity[CODE]: MESSAGE``.

    Equal when every field is, severity included (an error and a warning with the same
    text are two findings); sorted by place, then code and message.
    """

    path: str
    line: int
    col: int
    severity: Severity
    code: str
    message: str

    def __lt__(self, other: Diagnostic) -> bool:
        return self._sort_key() < other._sort_key()

    def _sort_key(self) -> tuple[str, int, int, str, str, str]:
        return (self.path, self.line, self.col, self.code, self.message, self.severity.value)

    @classmethod
    def at(cls, location: Location, severity: Severity, code: Code, message: str) -> Diagnostic:
        """Build a diagnostic at ``location``."""
        return cls(location.path, location.line, location.col, severity, code.id, message)

    @classmethod
    def error(cls, location: Location, code: Code, message: str) -> Diagnostic:
        """An error at ``location``."""
        return cls.at(location, Severity.ERROR, code, message)

    @classmethod
    def warning(cls, location: Location, code: Code, message: str) -> Diagnostic:
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


def has_errors(diagnostics: Sequence[Diagnostic]) -> bool:
    """True when any diagnostic is an error: the one gate between a compile and its manifest."""
    return any(d.is_error for d in diagnostics)


def settle(found: Iterable[Diagnostic], *, strict: bool) -> tuple[Diagnostic, ...]:
    """The final diagnostics of a run: under ``strict`` warnings become errors; then
    duplicates go and the rest are sorted. Every command decides through this one function."""
    if strict:
        found = (d.escalated() for d in found)
    return tuple(sorted(set(found)))
