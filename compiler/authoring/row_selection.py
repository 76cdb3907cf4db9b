"""Which rows of a capabilities export ``capc import`` turns into files.

A real table keeps rows it no longer uses (soft deletion: ``deleted_at`` set, or an
``is_active``/``enabled`` column false) and rows of several tenants (``group_id``), where
one code appears once per group. Soft-deleted rows are left out and listed; a group is
chosen with ``--group ID``, or every group gets its own tree with ``--by-group``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Columns that say a row is switched off; they are never written into a capability.
SOFT_DELETE_COLUMNS = ("deleted_at", "is_active", "enabled")
_FALSE_TEXT = frozenset({"0", "false", "f", "no", "n", "off"})
# A group id names a folder under --by-group: nothing that could leave the output folder.
_GROUP_FOLDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class IndexedRow:
    """A row of the export and its 0-based position in it (diagnostics locate by it)."""

    index: int
    row: Any


@dataclass(frozen=True, slots=True)
class RowSelection:
    """The rows to import, per group (the key is None without groups), and the
    soft-deleted rows left out, as their labels."""

    groups: dict[str | None, tuple[IndexedRow, ...]]
    deleted: tuple[str, ...]


def deletion_reason(row: Any) -> str | None:
    """Why a row is soft-deleted (``deleted_at set``, ``is_active false``), or None."""
    if not isinstance(row, Mapping):
        return None
    deleted_at = row.get("deleted_at")
    if deleted_at not in (None, "", 0, False):
        return "deleted_at is set"
    for column in ("is_active", "enabled"):
        if column in row and _is_false(row[column]):
            return f"{column} is false"
    return None


def _is_false(value: Any) -> bool:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value == 0
    return isinstance(value, str) and value.strip().lower() in _FALSE_TEXT


def group_of(row: Any) -> str | None:
    """The row's ``group_id`` as text (None when it has none)."""
    if not isinstance(row, Mapping) or row.get("group_id") in (None, ""):
        return None
    return str(row["group_id"])


def without_soft_delete_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row without the columns that only say whether it is in use."""
    return {key: value for key, value in row.items() if key not in SOFT_DELETE_COLUMNS}


def select_rows(rows: Sequence[Any], label_of: Any, *, group: str | None = None,
                by_group: bool = False) -> tuple[RowSelection, list[str]]:
    """The rows to import, split by group when asked, and the problems of the request
    (an unknown ``group``, rows without a group under ``by_group``, several groups
    mixed without either option)."""
    deleted: list[str] = []
    kept: list[IndexedRow] = []
    for index, row in enumerate(rows):
        reason = deletion_reason(row)
        if reason is not None:
            deleted.append(f"{label_of(index, row)}: {reason}")
        else:
            kept.append(IndexedRow(index, row))
    present = sorted({g for g in (group_of(r.row) for r in kept) if g is not None})
    problems: list[str] = []
    if group is not None:
        chosen = tuple(r for r in kept if group_of(r.row) == group)
        if not chosen:
            problems.append(f"no row (that is not deleted) has group_id {group!r}; the "
                            f"groups are: {', '.join(present) or 'none'}")
        return RowSelection({group: chosen}, tuple(deleted)), problems
    if by_group:
        groups: dict[str | None, tuple[IndexedRow, ...]] = {}
        for name in present:
            if not _GROUP_FOLDER.fullmatch(name):
                problems.append(f"group_id {name!r} cannot name a folder (letters, digits, "
                                "'_', '.', '-')")
            groups[name] = tuple(r for r in kept if group_of(r.row) == name)
        orphans = [label_of(r.index, r.row) for r in kept if group_of(r.row) is None]
        if orphans:
            problems.append(f"--by-group needs a group_id on every row; none on "
                            f"{', '.join(orphans[:5])}{' …' if len(orphans) > 5 else ''}")
        return RowSelection(groups, tuple(deleted)), problems
    if len(present) > 1:
        problems.append(f"the rows belong to {len(present)} groups ({', '.join(present[:10])}"
                        f"{' …' if len(present) > 10 else ''}): pass --group ID to import one, "
                        "or --by-group for one tree per group")
    return RowSelection({None: tuple(kept)}, tuple(deleted)), problems
