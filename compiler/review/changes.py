"""What ``capc diff`` reports, as values: changed fields and entries, security findings.

Kept apart from the comparisons (``compiler.review.diff``, ``compiler.review.pin_diff``)
so that both import these and neither imports the other's module for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

ABSENT: Final = "<absent>"
"""Stands for a field one side does not have (distinct from an explicit ``null``)."""

# Security findings, most serious first: a change that widens what an agent may do without
# a human, or exposes secrets, outranks one that only moves traffic somewhere new.
SECURITY_RANKS: Final[dict[str, int]] = {
    "allow-list-removed": 1,
    "approval-relaxed": 2,
    "plain-http": 3,
    "new-host": 4,
    "allowed-tools-widened": 5,
    "new-file-upload": 6,
    "condition-loosened": 5,
    "internal-codes-widened": 5,
    "new-placeholder": 7,
    "new-credential-header": 7,
    "method-changed": 8,
    "mcp-options-changed": 8,
    "input-schema-widened": 6,
    # Not a security change: a contract change (SPEC §16), what consumers of a tool's result
    # rely on (an output field removed or retyped), ranked after every security finding.
    "output-contract-changed": 20,
}

@dataclass(frozen=True, slots=True)
class FieldChange:
    """One changed leaf, by dotted path; ``old``/``new`` is :data:`ABSENT` when missing."""

    path: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class EntryChange:
    """An added, removed or changed capability, pending override or plugin."""

    kind: str
    key: str
    status: str
    label: str
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True, slots=True)
class SecurityFinding:
    """A change a reviewer must look at, with its rank (1 is the most serious)."""

    rank: int
    kind: str
    entry: str
    message: str


@dataclass(frozen=True, slots=True)
class ToolChanges:
    """Tool names added, removed and changed: api tools, and plugin tools recorded by
    ``capc compile --plugins`` (a plugin upgrade that changes a tool shows here)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ManifestDiff:
    """Everything :func:`diff_manifests` found."""

    entries: tuple[EntryChange, ...]
    tools: ToolChanges
    security: tuple[SecurityFinding, ...]

    @property
    def has_changes(self) -> bool:
        """True when the manifests differ in behaviour."""
        return bool(self.entries)

    def count(self, kind: str, status: str) -> int:
        """How many entries of ``kind`` have ``status``."""
        return sum(1 for e in self.entries if e.kind == kind and e.status == status)


__all__ = ["ABSENT", "SECURITY_RANKS", "EntryChange", "FieldChange", "ManifestDiff",
           "SecurityFinding", "ToolChanges"]
