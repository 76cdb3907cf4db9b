"""What differs between two listings of one MCP server: tools added, removed, changed.

Used by ``capc lock --check`` (the lock against a live listing) and by ``capc diff`` (the
pins of two manifests). A listing is any sequence of pinned descriptors (``name``,
``description``, ``input_schema``, ``annotations``?).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compiler.runtime.mcp.pins import changed_fields


@dataclass(frozen=True, slots=True)
class ToolChange:
    """A tool present on both sides whose pinned fields differ (``fields``: which)."""

    name: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ListingDrift:
    """Tools added, removed and changed from ``before`` to ``after``, each sorted by name."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[ToolChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def lines(self, indent: str = "  ") -> list[str]:
        """One line per difference: ``+ added NAME``, ``- removed NAME``, ``~ changed …``."""
        shown = [f"{indent}+ added {name}" for name in self.added]
        shown += [f"{indent}- removed {name}" for name in self.removed]
        shown += [f"{indent}~ changed {change.name}: {', '.join(change.fields)}"
                  for change in self.changed]
        return shown


def compare_listings(before: Iterable[Mapping[str, Any]],
                     after: Iterable[Mapping[str, Any]]) -> ListingDrift:
    """How ``after`` differs from ``before``."""
    old = {str(tool["name"]): tool for tool in before}
    new = {str(tool["name"]): tool for tool in after}
    changed = []
    for name in sorted(old.keys() & new.keys()):
        fields = changed_fields(old[name], new[name])
        if fields:
            changed.append(ToolChange(name, tuple(fields)))
    return ListingDrift(tuple(sorted(new.keys() - old.keys())),
                        tuple(sorted(old.keys() - new.keys())), tuple(changed))
