"""Where a cached document's nodes are, without storing its position table.

A document's position table (every node's and key's line and column) is the largest part
of a file's load result: storing it cost a cold compile about 10 ms of ``marshal`` alone
and made the per-file pack twice as large. Yet a compile asks where only a few nodes are
(the sources the manifest records, and the nodes a diagnostic points at).

So a loaded document's positions are a :class:`RecordedPositions`: it answers from the
real table and keeps every answer it gave. The per-file pack stores those answers instead
of the table. A later run that asks the same question gets the same answer from the
stored ones; a question no earlier run asked parses that one file again, from the same
bytes (the entry's key is their SHA-256), and answers from the table that parse makes.
Either way the answer is the one the table itself gives: locations never depend on
whether a document came from the cache, only the cost does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from compiler.source.documents import SourceDocument
    from compiler.source.yaml_loader import Locator, Path

Query: TypeAlias = "tuple[Path, bool]"
"""A question asked of a document's positions: (node path, whether its key is wanted)."""
Answers: TypeAlias = "dict[Query, tuple[int, int]]"


class RecordedPositions:
    """A document's positions that remember every answer they gave (see the module).

    Deliberately not frozen: the answers grow as the compile asks, and the table of a
    cached document is made only when a question is new.
    """

    __slots__ = ("_reparse", "_table", "answers")

    def __init__(self, table: Locator | None, answers: Answers | None = None,
                 reparse: Callable[[], Locator] | None = None) -> None:
        self._table = table
        self._reparse = reparse
        self.answers: Answers = {} if answers is None else answers

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """What ``PositionMap.locate`` answers for this document's own table."""
        query = (tuple(path), key)
        found = self.answers.get(query)
        if found is None:
            found = self.answers[query] = self._full_table().locate(path, key=key)
        return found

    def _full_table(self) -> Locator:
        if self._table is None:
            if self._reparse is None:  # pragma: no cover - every cached document has one
                raise LookupError("a stored document without its source")
            self._table = self._reparse()
        return self._table


class FileReparse:
    """Parses one file again, once, the first time one of its documents needs its table."""

    __slots__ = ("_parse", "_tables")

    def __init__(self, parse: Callable[[], Sequence[SourceDocument]]) -> None:
        self._parse = parse
        self._tables: list[Locator] | None = None

    def table(self, position: int) -> Locator:
        """The table of the file's ``position``-th document (load order, as stored)."""
        if self._tables is None:
            self._tables = [document.positions for document in self._parse()]
        return self._tables[position]


def answers_of(document: SourceDocument) -> Answers:
    """The answers a document loaded by ``build`` gave so far (empty for any other)."""
    positions: object = document.positions
    return positions.answers if isinstance(positions, RecordedPositions) else {}
