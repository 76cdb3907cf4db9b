"""Checks of a capability's ``when:`` (SPEC §2): the grammar, and attribute names the
application's ``RuntimeContext`` can actually carry."""

from __future__ import annotations

from typing import Any

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.runtime.conditions import (
    INTEGER_ATTRIBUTES,
    LOOKALIKE_OPERATORS,
    condition_attributes,
    condition_problems,
)
from compiler.source.documents import SourceDocument

INVALID_CONDITION = Code("invalid-condition", "a when condition cannot be parsed")
UNKNOWN_CONDITION_ATTRIBUTE = Code(
    "unknown-condition-attribute", "a when condition reads an unknown RuntimeContext attribute",
    Severity.WARNING)
CODES = (INVALID_CONDITION, UNKNOWN_CONDITION_ATTRIBUTE)

# What RuntimeContext has as named parameters; anything else is an extra keyword the
# application passes, which [tool.capc] context_attributes declares.
# The reference system's own runtime conditions (its resolution flow applies "canvas page
# type, subchat direction"; SPEC §2 writes ``when: {page_type: canvas}``): its agents pass
# them, so a tree imported from it never warns about them.
REFERENCE_ATTRIBUTES = ("page_type", "subchat_direction")
CONTEXT_ATTRIBUTES = tuple(sorted((*INTEGER_ATTRIBUTES, *REFERENCE_ATTRIBUTES)))


def check_when(document: SourceDocument, declared: tuple[str, ...] = ()) -> list[Diagnostic]:
    """Problems of ``when`` (errors) and attributes no context is known to carry (warnings:
    a test of an attribute that is never passed is unknown, so the tool never shows)."""
    when: Any = document.data.get("when")
    if when is None:
        return []
    found = [Diagnostic.error(document.location(("when", *path)), INVALID_CONDITION, message)
             for path, message in condition_problems(when)]
    known = (*CONTEXT_ATTRIBUTES, *declared)
    for path, name in condition_attributes(when):
        if name in known or name in LOOKALIKE_OPERATORS or name in ("settings", "documents"):
            continue  # known, or already an invalid-condition error
        import difflib  # only an error's "did you mean" needs it
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        found.append(Diagnostic.warning(
            document.location(("when", *path), key=True), UNKNOWN_CONDITION_ATTRIBUTE,
            f"{name!r} is not a RuntimeContext attribute (known: {', '.join(known)}); "
            f"{hint}if the application passes RuntimeContext({name}=...), declare it in "
            f"pyproject.toml: [tool.capc] context_attributes = [{name!r}]"))
    return found
