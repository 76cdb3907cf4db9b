"""Files capc writes itself, checked without parsing them again.

``capc import openapi`` renders each tool's data to YAML and compiles the tree it would
leave (SPEC §11): parsing its own thousands of files back cost GitHub's import about a
fifth of its time, to get back the data it had just written. So the import hands the
compile each file's bytes *and* the data they were rendered from, and the compile loads
such a file as that data, with positions read from the file's layout:

- :func:`written_document` takes the data only when loading the bytes could say nothing
  else: the bytes decode as a source file must (no control character), and the data is
  made of what the strict loader gives back as written (dicts with text keys that are no
  merge key and hold no invisible character or lone surrogate, lists, text with no lone
  surrogate and no line starting with a space or tab (see :func:`_as_loaded`), finite
  floats, integers within the digit limit, booleans, null; identifiers without invisible
  characters; within the nesting limit). Anything else is parsed, as any file is.
- :class:`LayoutPositions` answers where a top-level key or a key of a top-level block
  mapping is, and where its value starts, from the lines the writer lays out (keys at
  column 1 and 3); any other question, and any layout it does not recognise, is answered
  by parsing the file once (the question a diagnostic asks).

Proven equal by
tests/authoring/openapi/test_written_files.py::test_written_documents_load_as_parsed
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from compiler.source.characters import IDENTIFIER_KEYS, INVISIBLE_CHARACTERS
from compiler.source.documents import SourceDocument, parse_source
from compiler.source.yaml_converter import MAX_DEPTH, MAX_INTEGER_DIGITS
from compiler.source.yaml_loader import Locator, Path, PositionMap, decode_source

# A key the writer leaves plain (a quoted one is left to the parse), at column 1 or 3.
_KEY_LINE = re.compile(r"(  )?([A-Za-z_][A-Za-z0-9_-]*):( +(.))?")
_CONTENT_LINE = re.compile(r"( *)[^ #]")
_SHALLOW_LINE = re.compile(r"\n(?:  )?[^ \n]")
_FIRST_CONTENT = re.compile(r"^[^#\n]", re.MULTILINE)
# A value starting with one of these may hold keys or items (flow, block, or the text
# of a node YAML reads otherwise): only a scalar's first character is none of them.
_COLLECTION_STARTS = frozenset("{[-?&*!")
_BLOCK, _SCALAR, _OTHER = "block mapping", "scalar", "other"
# A lone surrogate (a JSON document's "\ud800") is written as an escape the YAML parser
# refuses: the compile of such a file reports it, so its data is never taken as loaded.
_SURROGATE = re.compile("[\ud800-\udfff]")


def loaded_as_written(path: str, raw: bytes, data: Any, variables: Mapping[str, Any],
                      locator: Callable[[Locator], Locator] | None = None
                      ) -> SourceDocument | None:
    """The document of the file ``path`` (bytes ``raw``) that capc rendered from ``data``,
    loaded as that data, or None (the caller parses it); its positions kept as ``locator``
    wraps them (the compile cache records the answers)."""

    def table() -> Locator:
        documents = parse_source(path, raw, variables)[0]
        return documents[0].positions if documents else PositionMap({})

    return written_document(path, raw, data, table, locator or _as_is)


def _as_is(positions: Locator) -> Locator:
    return positions


def written_document(path: str, raw: bytes, data: Any, reparse: Callable[[], Locator],
                     locator: Callable[[Locator], Locator]) -> SourceDocument | None:
    """The one document of the file ``path`` that capc rendered from ``data``, or None
    when loading ``raw`` could give anything else (the caller parses it).

    ``reparse``: the position table of a parse of ``raw``, for the questions the layout
    does not answer; ``locator`` wraps the positions as the compile keeps them."""
    if type(data) is not dict or not data or not _as_loaded(data):
        return None
    text, problem = decode_source(raw)
    if text is None or problem is not None:
        return None
    positions = LayoutPositions(text, reparse)
    first = positions.root_line()
    if first is None:
        return None
    return SourceDocument(path, 0, data, locator(positions), first)


def _as_loaded(data: dict[str, Any]) -> bool:
    """Whether the strict loader gives ``data`` back exactly as it is (see the module).

    Iterative, exact type checks, texts first: it looks at every node of every file."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        node, depth = pending.pop()
        if depth >= MAX_DEPTH - 2:
            return False
        if type(node) is dict:
            for key, value in node.items():
                if type(key) is not str or key == "<<" or (not key.isascii() and (
                        INVISIBLE_CHARACTERS.search(key) or _SURROGATE.search(key))):
                    return False
                if key in IDENTIFIER_KEYS and _hides_a_character(value):
                    return False
            node = node.values()
        for value in node:
            kind = type(value)
            if kind is str:
                if "\n" in value and ("\n " in value or "\n\t" in value):
                    return False
                if not value.isascii() and _SURROGATE.search(value):
                    return False
            elif kind is dict or kind is list:
                pending.append((value, depth + 1))
            elif not _loaded_scalar(value, kind):
                return False
    return True


def _loaded_scalar(value: Any, kind: type) -> bool:
    """A number, boolean or null the loader reads back as it is (texts are checked where
    they are met: a text with a line starting with a space or tab is parsed, as the one
    kind a writer once wrote so that it read back otherwise: Kubernetes' descriptions,
    folded by the emitter, now written double-quoted by render)."""
    if kind is bool or value is None:
        return True
    if kind is int:
        return len(str(value)) <= MAX_INTEGER_DIGITS
    return kind is float and math.isfinite(value)


def _hides_a_character(value: Any) -> bool:
    texts = value if type(value) is list else [value]
    return any(type(text) is str and not text.isascii()
               and INVISIBLE_CHARACTERS.search(text) is not None for text in texts)


Entry = tuple[int, ...]  # (line, col) of the root; (value line, col, key line, col) else


class LayoutPositions:
    """A written document's positions (see the module): the shallow ones from its lines,
    the rest from one parse, made the first time a question needs it."""

    __slots__ = ("_layout", "_reparse", "_table", "_text")

    def __init__(self, text: str, reparse: Callable[[], Locator]) -> None:
        self._text = text
        self._reparse = reparse
        self._table: Locator | None = None
        self._layout: _Layout | None = None

    def root_line(self) -> int | None:
        """The line the document starts on (its first key), or None: not a layout known."""
        root = self._read().entries.get(())
        return root[0] if root else None

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """What the parsed document's ``PositionMap.locate`` answers."""
        layout = self._read()
        probe = tuple(path)
        if layout.answers(probe):
            entries = layout.entries
            while probe:  # PositionMap.locate's walk, over a table complete for it
                found = entries.get(probe)
                if found:
                    return (found[2], found[3]) if key else (found[0], found[1])
                probe = probe[:-1]
            return entries[()][0], entries[()][1]
        if self._table is None:
            self._table = self._reparse()
        return self._table.locate(path, key=key)

    def _read(self) -> _Layout:
        if self._layout is None:
            self._layout = _Layout.of(self._text)
        return self._layout


class _Layout:
    """The entries of the top-level keys and of the keys of each top-level block mapping
    read in full (``complete``: scalar values have no keys, so they are complete too); no
    entry at all for a layout the writer does not make."""

    __slots__ = ("complete", "entries")

    def __init__(self) -> None:
        self.entries: dict[Path, Entry] = {}
        self.complete: set[str] = set()

    def answers(self, probe: Path) -> bool:
        """Whether the entries hold every prefix of ``probe`` that the document has."""
        if not self.entries or len(probe) > 2:
            return False
        return len(probe) < 2 or probe[0] in self.complete or (probe[0],) not in self.entries

    @classmethod
    def of(cls, text: str) -> _Layout:
        """The layout of ``text`` (no entries when it is not one the writer makes)."""
        layout = cls()
        first = _FIRST_CONTENT.search(text)
        if first is None or text[first.start()] == " ":
            return layout
        lines = text.split("\n")
        entries: dict[Path, Entry] = {(): (text.count("\n", 0, first.start()) + 1, 1)}
        parent: str | None = None  # the top-level block mapping whose keys are read
        for index in _shallow_lines(text):
            line = lines[index]
            if line[:1] == "#":
                continue
            if line[:1] != " ":
                read = _top_level_key(lines, index, entries)
                if read is None:
                    return layout
                name, kind = read
                parent = name if kind == _BLOCK else None
                if kind != _OTHER:
                    layout.complete.add(name)
            elif parent is not None and line[2:3] != " " and not _nested_key(
                    lines, index, parent, entries):
                layout.complete.discard(parent)
                parent = None
        layout.entries = entries
        return layout


def _shallow_lines(text: str) -> Iterator[int]:
    """The (0-based) numbers of the lines whose text starts at column 1 or 3: the lines
    of the keys asked for, without a Python step for each of the others."""
    if text[:1] not in (" ", "\n", ""):
        yield 0
    line = last = 0
    for match in _SHALLOW_LINE.finditer(text):
        line += text.count("\n", last, match.end())
        last = match.end()
        yield line


def _top_level_key(lines: list[str], index: int, entries: dict[Path, Entry]
                   ) -> tuple[str, str] | None:
    """Record the top-level key on line ``index``: its name and the kind of its value
    (a block mapping, a scalar, other), or None when the line is not a key the writer
    writes."""
    match = _KEY_LINE.match(lines[index])
    value = _value_at(lines, index, match, 0) if match and not match.group(1) else None
    if match is None or value is None:
        return None
    name = match.group(2)
    entries[(name,)] = (*value, index + 1, 1)
    if match.group(3) is not None:
        return name, _OTHER if match.group(4) in _COLLECTION_STARTS else _SCALAR
    below = lines[value[0] - 1]
    return name, _BLOCK if value[1] == 3 and _KEY_LINE.match(below) else _OTHER


def _nested_key(lines: list[str], index: int, parent: str,
                entries: dict[Path, Entry]) -> bool:
    """Record the key on line ``index`` (column 3) of ``parent``'s block mapping; False when
    the line is not such a key (the parse answers for that block)."""
    match = _KEY_LINE.match(lines[index])
    value = _value_at(lines, index, match, 2) if match and match.group(1) else None
    if match is None or value is None:
        return False
    entries[(parent, match.group(2))] = (*value, index + 1, 3)
    return True


def _value_at(lines: list[str], index: int, match: re.Match[str],
              indent: int) -> tuple[int, int] | None:
    """Where the value of the key ``match`` found on line ``index`` (indented ``indent``)
    starts: on its line, or the next line's first character when that line is deeper;
    None for anything else (an empty value, text after the colon the pattern missed)."""
    if match.group(3) is not None:
        return index + 1, match.start(4) + 1
    if match.end() != len(lines[index]):
        return None
    for below in range(index + 1, len(lines)):
        line = lines[below]
        if not line:
            continue
        found = _CONTENT_LINE.match(line)
        deeper = found is not None and len(found.group(1)) > indent
        return (below + 1, len(found.group(1)) + 1) if deeper and found else None
    return None
