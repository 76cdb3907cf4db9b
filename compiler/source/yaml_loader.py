"""Strict YAML: libyaml's parser, our own resolver and a converter that records positions.

PyYAML's defaults are YAML 1.1: ``no`` is False, ``0777`` is 511, ``1:30`` is 90 and a
repeated key silently wins. A capability file is reviewed by people who read it as
YAML 1.2 (or as plain text), so every construct whose meaning differs is an error here,
and so are the constructs that only serve attacks (merge keys, alias bombs, custom tags).

Positions are kept as a flat map from a node's path to its (line, column), not as node
trees: the map is all a diagnostic needs, and whole node trees cost memory and GC time.
"""

from __future__ import annotations

from typing import Any, Protocol

import yaml

from compiler.diagnostics import Code
from compiler.runtime.records import record
from compiler.source.characters import ALLOWED_ASCII, CONTROL_CHARACTERS, control_message
from compiler.source.safe_read import MAX_SOURCE_BYTES

# Re-exported: the converter's limits, codes and problem value are read from the loader.
from compiler.source.yaml_converter import MAX_ALIASES as MAX_ALIASES
from compiler.source.yaml_converter import MAX_DEPTH as MAX_DEPTH
from compiler.source.yaml_converter import MAX_EXPANDED_NODES as MAX_EXPANDED_NODES
from compiler.source.yaml_converter import MAX_INTEGER_DIGITS as MAX_INTEGER_DIGITS
from compiler.source.yaml_converter import YAML_TOO_DEEP, NodeConverter
from compiler.source.yaml_converter import Path as Path
from compiler.source.yaml_converter import Position as Position
from compiler.source.yaml_converter import YamlProblem as YamlProblem
from compiler.source.yaml_resolver import BOOL_TAG as BOOL_TAG
from compiler.source.yaml_resolver import FLOAT_TAG as FLOAT_TAG
from compiler.source.yaml_resolver import INT_TAG as INT_TAG
from compiler.source.yaml_resolver import NULL_TAG as NULL_TAG
from compiler.source.yaml_resolver import StrictParser
from compiler.source.yaml_resolver import StrictResolver as StrictResolver

CONTROL_CHARACTER = Code("control-character", "a source file holds a control character")
ENCODING = Code("encoding", "a source file is not valid UTF-8")
FILE_TOO_LARGE = Code("file-too-large", "a source file is larger than the limit")
YAML_SYNTAX = Code("yaml-syntax", "invalid YAML")
CODES = (CONTROL_CHARACTER, ENCODING, FILE_TOO_LARGE, YAML_SYNTAX)

MAX_FILE_BYTES = MAX_SOURCE_BYTES


class Locator(Protocol):
    """What a document's positions answer: where a node (or its key) starts, 1-based.

    A :class:`PositionMap` answers from its table; the compile cache's recorded positions
    (compiler/cache/position_answers.py) answer what the table would, from stored answers.
    """

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path`` (its key when ``key``), else of its nearest located ancestor."""
        ...


@record(frozen=True, slots=True)
class PositionMap:
    """Where each value (and each mapping key) of one document starts, 1-based.

    One table, not a table of values and one of keys: a mapping entry's two positions
    share its path, so the loader makes and the cache stores each path once.
    """

    values: dict[Path, Position]

    def locate(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path`` (its key when ``key``), else of its nearest located ancestor."""
        table = self.values
        probe = tuple(path)
        while probe:
            found = table.get(probe)
            if found:
                if key and len(found) == 4:
                    return found[2], found[3]
                if found[0]:
                    return found[0], found[1]
            probe = probe[:-1]
        root = table.get(())
        return (root[0], root[1]) if root and root[0] else (1, 1)


@record(frozen=True, slots=True)
class LoadedDocument:
    """One YAML document: its data, where each node is, and its first line."""

    index: int
    data: Any
    positions: PositionMap
    line: int


def decode_source(raw: bytes, limit: int = MAX_FILE_BYTES) -> tuple[str | None, YamlProblem | None]:
    """Bytes → text, refusing oversized files, non-UTF-8 bytes and control characters.

    An ASCII text of allowed bytes skips the search. Proven equal by
    tests/source/test_converter_fast_paths.py::test_any_text_decodes_as_the_regex_decides.
    """
    if len(raw) > limit:
        return None, YamlProblem(
            1, 1, FILE_TOO_LARGE, f"file is larger than the limit of {limit} bytes"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, col = _line_col(raw[: error.start].decode("utf-8", "replace"), error.start)
        return None, YamlProblem(
            line, col, ENCODING, f"invalid UTF-8 byte 0x{raw[error.start]:02x}; save as UTF-8"
        )
    if raw.isascii() and not raw.translate(None, ALLOWED_ASCII):
        return text, None  # most sources: no byte but allowed ones, so no refused character
    text = text.removeprefix("\ufeff")
    match = CONTROL_CHARACTERS.search(text)
    if match:
        line, col = _line_col(text, match.start())
        return None, YamlProblem(line, col, CONTROL_CHARACTER, control_message(match.group()))
    return text, None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    line = before.count("\n") + 1
    return line, offset - (before.rfind("\n") + 1) + 1


def load_documents(text: str, tags: dict[str, str] | None = None
                   ) -> tuple[list[LoadedDocument], list[YamlProblem]]:
    """Parse every document of ``text``; problems are collected, never raised.
    ``tags``: the compile's remembered plain-text tags (:class:`StrictParser`)."""
    problems: list[YamlProblem] = []
    documents: list[LoadedDocument] = []
    parser = StrictParser(text, tags)
    try:
        index = 0
        while parser.check_node():
            node = parser.get_node()
            if node is None:
                continue
            converter = NodeConverter.for_text(problems, text)
            data = converter.convert(node, (), 0)
            positions = PositionMap(converter.values)
            documents.append(LoadedDocument(index, data, positions, node.start_mark.line + 1))
            index += 1
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = _yaml_message(error)
        if _tab_at(text, line, col):
            message += " (YAML does not allow tabs for indentation; use spaces)"
        problems.append(YamlProblem(line, col, YAML_SYNTAX, message))
    except yaml.YAMLError as error:  # reader errors carry no mark
        problems.append(YamlProblem(1, 1, YAML_SYNTAX, str(error).splitlines()[0]))
    except RecursionError:
        problems.append(YamlProblem(1, 1, YAML_TOO_DEEP, "nesting too deep to parse"))
    finally:
        parser.dispose()
    return documents, problems


def _yaml_message(error: yaml.MarkedYAMLError) -> str:
    parts = [part for part in (error.context, error.problem) if part]
    return "; ".join(parts) or "invalid YAML"


def _tab_at(text: str, line: int, col: int) -> bool:
    lines = text.splitlines()
    return 0 < line <= len(lines) and "\t" in lines[line - 1][: max(col, 1)]
