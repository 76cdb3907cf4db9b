"""The one Diagnostic value and the one place a run's diagnostics are decided."""

from __future__ import annotations

from compiler.diagnostics import Code, Diagnostic, Location, Severity, has_errors, settle

AT = Location("capabilities/a.yaml", 3, 5)
X, Y, Z = Code("x", "a test code"), Code("y", "a test code"), Code("z", "a test code")
A, B = Code("a", "a test code"), Code("b", "a test code")


def test_severity_is_part_of_equality() -> None:
    error = Diagnostic.error(AT, X, "same text")
    warning = Diagnostic.warning(AT, X, "same text")
    assert error != warning
    assert len({error, warning}) == 2


def test_settle_keeps_an_error_and_a_warning_of_the_same_text() -> None:
    error = Diagnostic.error(AT, X, "same text")
    warning = Diagnostic.warning(AT, X, "same text")
    settled = settle([warning, error, warning], strict=False)
    assert settled == (error, warning)
    assert has_errors(settled)


def test_strict_escalates_then_merges_what_became_equal() -> None:
    error = Diagnostic.error(AT, X, "same text")
    warning = Diagnostic.warning(AT, X, "same text")
    other = Diagnostic.warning(Location("capabilities/a.yaml", 1, 1), Y, "earlier")
    settled = settle([warning, error, other], strict=True)
    assert settled == (other.escalated(), error)
    assert all(d.severity is Severity.ERROR for d in settled)


def test_sorted_by_place_then_code_and_message() -> None:
    later = Diagnostic.error(Location("b.yaml", 1, 1), A, "m")
    first = Diagnostic.warning(Location("a.yaml", 9, 9), Z, "m")
    same_place = Diagnostic.error(Location("a.yaml", 9, 9), B, "m")
    assert settle([later, first, same_place], strict=False) == (same_place, first, later)
    assert not has_errors(settle([first], strict=False))
