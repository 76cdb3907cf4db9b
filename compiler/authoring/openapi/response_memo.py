"""Reply sub-schemas already converted in this import, for :mod:`responses` to reuse.

Stripe's and GitHub's replies reach the same objects again and again (an expandable
``customer`` inside every charge, ``simple-user`` inside every issue), and an attempt
that passes ``MAX_NODES`` is redone shallower: converting each anew cost most of the
import's mapping time. A conversion depends on the schema's location, the nesting left
below it (and whether the limit is the full one, which notes where it cuts) and which
locations are already being expanded above it (a recursive schema accepts any value
there). So an entry is kept only when the conversion met none of the locations above
it, with the set of locations it checked; it is reused under another path when none of
that path's locations is in the set: the walk would then do exactly what it did.

Notes are kept without the label of the place they were made at (each note starts with
that label) and the label of the new place is put back. An attempt that ran out of nodes
inside a sub-schema leaves a lower bound of its size, so a later attempt that cannot
afford it stops at once, as it would have after counting that far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Location = tuple[str, tuple[str | int, ...]]
# A note, or a reused part's notes: the label they were made under is put before each.
Note = str | tuple[str, tuple["Note", ...]]
# Where a sub-schema is, the nesting left below it, whether the limit is the full one.
Place = tuple[Location, int, bool]


@dataclass(frozen=True, slots=True)
class Converted:
    """One sub-schema's conversion, or (``complete`` False) a lower bound of its size."""

    schema: Any
    suffixes: tuple[Note, ...]  # its notes, each without the label it was made under
    nodes: int  # nodes it counted (complete), or at least that many (not complete)
    checked: frozenset[Location]  # the locations its walk looked up in the stack
    complete: bool
    reach: int  # the deepest level below it the walk checked the nesting limit at
    cut: bool  # whether the nesting limit cut anything

    def fits(self, stack: Sequence[Location]) -> bool:
        """Whether the walk under ``stack`` meets none of it, so goes as recorded."""
        return self.checked.isdisjoint(stack)


class ConvertedParts:
    """The per-import table of :class:`Converted` sub-schemas (lives on ``References``).

    A part the nesting limit did not cut is the same under any limit that leaves it
    ``reach`` levels: it is kept by location alone; a cut one only for its own place.
    """

    def __init__(self) -> None:
        self.whole: dict[Location, Converted] = {}
        self.cut: dict[Place, Converted] = {}

    def found(self, place: Place, stack: Sequence[Location]) -> Converted | None:
        """The entry for ``place`` that is valid under ``stack``, if any."""
        entry = self.whole.get(place[0])
        if entry is not None and entry.reach <= place[1] and entry.fits(stack):
            return entry
        entry = self.cut.get(place)
        return entry if entry is not None and entry.fits(stack) else None

    def keep(self, place: Place, entry: Converted) -> None:
        """Keep ``entry``; a lower bound never replaces a whole conversion."""
        if entry.cut:
            self._keep(self.cut, place, entry)
        else:
            self._keep(self.whole, place[0], entry)

    @staticmethod
    def _keep(table: dict[Any, Converted], key: Any, entry: Converted) -> None:
        if entry.complete or key not in table or not table[key].complete:
            table[key] = entry


@dataclass(slots=True)
class Tracker:
    """What one walk met since the innermost part it is converting began: the locations
    it looked up in the stack (one by one, or a reused or finished part's as one set),
    the lowest stack index a recursive location was found at, the deepest level it
    checked the nesting limit at, and whether the limit cut anything."""

    checked: list[Location] = field(default_factory=list)
    checked_sets: list[frozenset[Location]] = field(default_factory=list)
    lowest_hit: int = 0
    reach: int = 0
    cut: bool = False

    def begin(self, height: int, depth: int) -> tuple[Any, ...]:
        """A part starts at stack ``height`` and ``depth``: what to restore at its end."""
        saved = (len(self.checked), len(self.checked_sets), self.lowest_hit, self.reach,
                 self.cut)
        self.lowest_hit, self.reach, self.cut = height, depth, False
        return saved

    def finished(self, saved: tuple[Any, ...], height: int, depth: int, schema: Any,
                 notes: Sequence[Note], label: str, nodes: int) -> Converted | None:
        """The part begun with ``saved`` as an entry, its locations gathered into one set
        and its ``notes`` without its ``label``; None when it met a location above it or
        is one node (converted anew as cheaply as looked up). The enclosing part's state
        back."""
        entry = None
        if self.lowest_hit >= height and nodes > 1:
            checked = frozenset(self.checked[saved[0]:]).union(*self.checked_sets[saved[1]:])
            del self.checked[saved[0]:], self.checked_sets[saved[1]:]
            self.checked_sets.append(checked)
            size = len(label)
            entry = Converted(schema, tuple(
                note[size:] if isinstance(note, str) else (note[0][size:], note[1])
                for note in notes), nodes, checked, schema is not None,
                self.reach - depth, self.cut)
        self.lowest_hit = min(saved[2], self.lowest_hit)
        self.reach = max(saved[3], self.reach)
        self.cut = saved[4] or self.cut
        return entry

    def reused(self, entry: Converted, depth: int) -> None:
        """``entry`` reused at ``depth``: what its walk met, the enclosing part met."""
        self.checked_sets.append(entry.checked)
        self.reach = max(self.reach, depth + entry.reach)
        self.cut = self.cut or entry.cut


def spelled_notes(notes: Sequence[Note], label: str = "") -> list[str]:
    """``notes`` as text, each reused part's under its label, in order."""
    spelled: list[str] = []
    for note in notes:
        if isinstance(note, str):
            spelled.append(label + note)
        else:
            spelled += spelled_notes(note[1], label + note[0])
    return spelled
