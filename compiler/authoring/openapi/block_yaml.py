"""One pass over a block-style YAML text: the data the strict composer and converter give,
and where each value starts, without building libyaml's node tree.

Real OpenAPI documents written as YAML use a small part of YAML: block mappings and
sequences by indentation, plain, quoted and block scalars, comments, and one-line flow
collections of scalars such as ``[]``, ``[a, b]`` or ``{type: string}``.
:func:`read_block_yaml` reads exactly that part, line by line, and gives up
(:class:`OutsideTheSubset`) on anything else (anchors, aliases, tags, duplicate keys,
``?`` keys, flow collections across lines, a tab outside a block scalar's text, CR line
ends, more than one document, deep nesting ...): the caller then reads the text the
general way, which reports what it finds exactly as before. Every loop walks the lines
forward; no line is read more than a few times. This module reads the block collections;
:mod:`block_scalars` the scalars and one-line flow collections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.block_scalars import (
    MAX_DEPTH,
    MAX_KEY_LENGTH,
    NOT_PLAIN,
    OutsideTheSubset,
    Position,
    ScalarReading,
    indent_of,
    start_at,
)

Path_ = tuple[str | int, ...]


# Characters libyaml accepts (printable, YAML 1.2) less the line breaks other than LF and
# the byte order mark: a text holding any other character is read the general way. A tab
# is read only in a block scalar's text (past its indentation), where code samples hold it.
_OUTSIDE = re.compile(
    "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
# Document markers at the start of a line.
_MARKER = re.compile(r"^(?:---|\.\.\.)(?= |$)", re.MULTILINE)
@dataclass(frozen=True, slots=True)
class BlockPositions:
    """Where each value of a document read in one pass starts, as found in its text: the
    data read is not consulted, so a caller may copy or change it."""

    root: Position

    def locate(self, path: Path_) -> tuple[int, int]:
        """Line and column (from 1) of the value at ``path``, else of its nearest ancestor,
        as the composed node's start mark gives them."""
        node = self.root
        for part in path:
            if isinstance(node, int):
                break
            members = node[1]
            child: Position | None
            if isinstance(members, dict):
                child = members.get(str(part))
            elif isinstance(part, int) and 0 <= part < len(members):
                child = members[part]
            else:
                child = None
            if child is None:
                break
            node = child
        position = node if isinstance(node, int) else node[0]
        return (position >> 32) + 1, (position & 0xFFFFFFFF) + 1


@dataclass(frozen=True, slots=True)
class BlockRead:
    """A text read in one pass: its data and where each value starts."""

    data: Any
    positions: BlockPositions


def read_block_yaml(text: str) -> BlockRead:
    """The data ``_Converter.convert(_compose(text))`` gives, with positions; raises
    :class:`OutsideTheSubset` for a text the general path must read.

    A shortcut beside document.py's general path (libyaml's composer and the converter).
    Proven equal by
    tests/authoring/openapi/test_openapi_block_yaml.py::test_github_and_stripe_read_in_one_pass
    and ::test_each_case_read_as_composed_or_given_up (data, types and positions).
    """
    if _OUTSIDE.search(text) is not None:
        raise OutsideTheSubset("a CR, BOM or character outside the subset")
    return _Reader(text).read()


@dataclass(slots=True)
class _Reader(ScalarReading):
    """One read of one text (the remembered scalars and positions are this read's)."""

    text: str
    lines: list[str] = field(default_factory=list)
    indents: list[int] = field(default_factory=list)  # -1: a line of spaces only
    final_break: bool = True
    tabs: bool = False  # whether the text holds a tab
    tab_lines: int = 0  # lines with a tab read as a block scalar's text
    values: dict[str, Any] = field(default_factory=dict)

    def read(self) -> BlockRead:
        """The text's data and positions (the root a block mapping or sequence)."""
        text = self.text
        lines = text.split("\n")
        self.final_break = lines[-1] == ""
        if self.final_break:
            lines.pop()
        self.lines = lines
        self.indents = [indent_of(line) for line in lines]
        self.tabs = "\t" in text
        start = self._next_content(0)
        if start == len(lines):
            raise OutsideTheSubset("empty")
        markers = [match.start() for match in _MARKER.finditer(text)]
        if markers:
            if len(markers) > 1 or lines[start].rstrip(" ") != "---":
                raise OutsideTheSubset("document markers")
            start = self._next_content(start + 1)
            if start == len(lines):
                raise OutsideTheSubset("empty")
        column = self.indents[start]
        first = lines[start][column]
        if not (first == "-" and lines[start][column + 1:column + 2] in ("", " ")) \
                and self._key(lines[start], column) is None:
            raise OutsideTheSubset("the root is not a block collection")
        data, position, end = self._block(start, column, -1, 0)
        if self._next_content(end) != len(lines):
            raise OutsideTheSubset("text after the root collection")
        if self.tabs and self.tab_lines != sum("\t" in line for line in lines):
            raise OutsideTheSubset("a tab outside a block scalar's text")
        return BlockRead(data, BlockPositions(position))

    def _next_content(self, index: int) -> int:
        lines, indents, count = self.lines, self.indents, len(self.lines)
        while index < count:
            indent = indents[index]
            if indent >= 0 and lines[index][indent] != "#":
                return index
            index += 1
        return count

    def _key(self, line: str, column: int) -> tuple[str, int] | None:
        """The key starting at ``column`` and the column just past its ``:``, or None when
        the text there is not a key."""
        first = line[column]
        if first == '"' or first == "'":
            quoted = self._quoted(line, column)
            if quoted is None:
                return None
            key, end = quoted
            while end < len(line) and line[end] == " ":
                end += 1
            if line[end:end + 1] == ":" and line[end + 1:end + 2] in ("", " "):
                return key, end + 1
            return None
        if first in NOT_PLAIN or (first in "-?:" and line[column + 1:column + 2] in ("", " ")):
            return None
        colon = line.find(": ", column)
        if colon < 0:
            if not line.endswith(":"):
                return None
            colon = len(line) - 1
        key = line[column:colon].rstrip(" ")
        if " #" in key or len(key) > MAX_KEY_LENGTH or key == "<<":
            raise OutsideTheSubset("a key with a comment, too long, or a merge key")
        return key, colon + 1

    def _next_member(self, index: int, column: int, what: str) -> tuple[int, bool]:
        """The next line with content after ``index``, and whether it holds the next member
        of the collection at ``column`` (False: the collection ended before it)."""
        index = self._next_content(index)
        if index == len(self.lines) or self.indents[index] < column:
            return index, False
        if self.indents[index] > column:
            raise OutsideTheSubset(f"indented past the {what}")
        return index, True

    def _block(self, index: int, column: int, parent: int, depth: int) -> tuple[Any, Position, int]:
        """The node starting at ``column`` of line ``index`` (the first text of a line, or
        after a sequence entry's ``-``): its value, position and the line after it."""
        if depth > MAX_DEPTH:
            raise OutsideTheSubset("nesting")
        line = self.lines[index]
        if line[column] == "-" and line[column + 1:column + 2] in ("", " "):
            return self._sequence(index, column, depth)
        if self._key(line, column) is not None:
            return self._mapping(index, column, depth)
        return self._scalar(index, column, parent, depth)

    def _mapping(self, index: int, column: int, depth: int) -> tuple[Any, Position, int]:
        lines = self.lines
        start = start_at(index, column)
        result: dict[str, Any] = {}
        positions: dict[str, Position] = {}
        while True:
            found = self._key(lines[index], column)
            if found is None:
                raise OutsideTheSubset("not a key where a key is due")
            key, after = found
            if key in result:
                raise OutsideTheSubset("a duplicate key")
            result[key], positions[key], index = self._value(index, after, column, depth + 1)
            index, more = self._next_member(index, column, "mapping's keys")
            if not more:
                break
        return result, (start, positions), index

    def _value(self, index: int, after: int, column: int, depth: int) -> tuple[Any, Position, int]:
        """The value of the key whose ``:`` ends just before ``after`` (the mapping's keys
        at ``column``)."""
        line = self.lines[index]
        start = after
        while start < len(line) and line[start] == " ":
            start += 1
        if start < len(line) and line[start] != "#":
            return self._scalar(index, start, column, depth)
        following = self._next_content(index + 1)
        if following < len(self.lines):
            indent = self.indents[following]
            if indent > column:
                return self._block(following, indent, column, depth)
            text = self.lines[following]
            if indent == column and text[column] == "-" and text[column + 1:column + 2] in (
                    "", " "):
                if depth > MAX_DEPTH:
                    raise OutsideTheSubset("nesting")
                return self._sequence(following, column, depth)
        return None, start_at(index, after), index + 1

    def _sequence(self, index: int, column: int, depth: int) -> tuple[Any, Position, int]:
        lines, indents, count = self.lines, self.indents, len(self.lines)
        start = start_at(index, column)
        result: list[Any] = []
        positions: list[Position] = []
        while True:
            line = lines[index]
            entry = column + 1
            while entry < len(line) and line[entry] == " ":
                entry += 1
            if entry < len(line) and line[entry] != "#":
                value, position, index = self._block(index, entry, column, depth + 1)
            else:
                following = self._next_content(index + 1)
                if following < count and indents[following] > column:
                    value, position, index = self._block(following, indents[following],
                                                         column, depth + 1)
                else:
                    value, position, index = None, start_at(index, column + 1), index + 1
            result.append(value)
            positions.append(position)
            index, more = self._next_member(index, column, "sequence's entries")
            if not more:
                break
            line = lines[index]
            if not (line[column] == "-" and line[column + 1:column + 2] in ("", " ")):
                break  # the next key of the mapping holding this unindented sequence
        return result, (start, positions), index
