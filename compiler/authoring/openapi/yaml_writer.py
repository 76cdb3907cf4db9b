"""The fast path of a generated file's YAML: the same bytes as render's PyYAML dumper.

PyYAML's Python emitter builds a node and several events per value and reads every text
character by character (libyaml's cannot indent a sequence under its key nor fold text by
words, so :mod:`render` uses the Python one). A generated file holds only the shapes the
importer makes (mappings with text keys, lists, text, integers, floats, booleans, null),
so this writer lays them out directly, following the emitter's rules for the choices that
depend on a text (plain, quoted or folded; where a long line breaks) with regular
expressions and string methods instead of loops over characters. A shape it does not
take (a key that needs ``?``, a text with a Unicode line separator, a value of another
type) raises :class:`Unwritable` and the caller uses PyYAML for that file.

Proven equal by
tests/authoring/openapi/test_yaml_writer.py::test_public_documents_render_the_same_bytes
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import repeat
from typing import Any

from compiler.authoring.openapi.yaml_layout import LINE_LIMIT, WIDTH, folded_lines
from compiler.authoring.openapi.yaml_scalars import (
    STR_TAG,
    Choice,
    ScalarStyles,
    block_hints,
    choose,
    escaped,
    scalar_text,
)

_TOKENS = re.compile(r" +|[^ ]+")
_FOLD_TOKENS = re.compile(r"\n+| +|[^ \n]+")


class Unwritable(Exception):
    """A value this writer leaves to PyYAML."""


class YamlWriter:
    """One document's text, written as the emitter would write it (its column, whether
    the last character was a space or an indentation, kept as the emitter keeps them).
    ``styles``: the choices already made for the import's texts."""

    def __init__(self, styles: ScalarStyles | None = None) -> None:
        self.parts: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.open_ended = False
        self.flow_level = 0
        self.styles = ScalarStyles() if styles is None else styles

    def document(self, data: Mapping[str, Any]) -> str:
        """The YAML text of ``data``, a mapping."""
        if not isinstance(data, Mapping):
            raise Unwritable("the root is not a mapping")
        self._node(data, None, 0)
        self._write_indent(0)
        if self.open_ended:
            self._indicator("...", True)
            self._write_indent(0)
        return "".join(self.parts)

    # Collections.

    def _node(self, value: Any, indent: int | None, column: int) -> None:
        kind = type(value)
        if kind is str:
            self._scalar(value, 2 if indent is None else indent + 2, False)
            return
        mapping = kind is dict or isinstance(value, Mapping)
        if mapping or kind is list or isinstance(value, list):
            if not value:  # the indicators "{" (a space before it) and "}" at once
                written = ("{}" if mapping else "[]") if self.whitespace else (
                    " {}" if mapping else " []")
                self.parts.append(written)
                self.column += len(written)
                self.whitespace = self.indention = self.open_ended = False
            elif self.styles.fits(value, column):
                self._flow(value, indent, mapping)
            elif mapping:
                self._block_mapping(value, indent, column + 2)
            else:
                self._block_sequence(value, indent, column + 2)
        else:
            self._scalar(value, 2 if indent is None else indent + 2, False)

    def _block_mapping(self, value: Mapping[Any, Any], indent: int | None, column: int
                       ) -> None:
        indent = 0 if indent is None else indent + 2
        keys, values, parts = self.styles.block_keys, self.styles.block_values, self.parts
        line = "\n" + " " * indent
        for key, child in value.items():
            choice = keys.get(key) if type(key) is str else None
            if choice is None or choice[1] is None:  # made afresh, or not written whole
                self._write_indent(indent)
                self._scalar(key, indent + 2, True)
                self._indicator(":", False)
            else:  # _write_indent's line break or spaces, the key and ":" at once
                if not self.indention or self.column > indent or (
                        self.column == indent and not self.whitespace):
                    parts.append(line + choice[1] + ":")
                else:
                    parts.append(" " * (indent - self.column) + choice[1] + ":")
                self.column = indent + len(choice[1]) + 1
                self.whitespace = self.indention = self.open_ended = False
            if type(child) is str:
                choice = values.get(child)
                # A text ending by the wrap column after ": " (a quoted one's closing
                # quote may pass it) is neither folded nor moved to the next line.
                if choice is not None and choice[1] is not None and self.column + 1 + len(
                        choice[1]) <= (WIDTH + 2 if choice[0] else WIDTH + 1):
                    parts.append(" " + choice[1])
                    self.column += 1 + len(choice[1])
                    continue
            self._node(child, indent, column)

    def _block_sequence(self, value: list[Any], indent: int | None, column: int) -> None:
        indent = 0 if indent is None else indent + 2
        values, parts = self.styles.block_values, self.parts
        line = "\n" + " " * indent
        for item in value:
            # _write_indent and the indicator "-" at once (the indentation kept).
            if not self.indention or self.column > indent or (
                    self.column == indent and not self.whitespace):
                parts.append(line + "-")
            else:
                parts.append(" " * (indent - self.column) + "-")
            self.column = indent + 1
            self.whitespace = self.open_ended = False
            self.indention = True
            if type(item) is str:
                choice = values.get(item)
                if choice is not None and choice[1] is not None and self.column + 1 + len(
                        choice[1]) <= (WIDTH + 2 if choice[0] else WIDTH + 1):
                    parts.append(" " + choice[1])
                    self.column += 1 + len(choice[1])
                    self.indention = False
                    continue
            self._node(item, indent, column)

    def _flow(self, value: Mapping[Any, Any] | list[Any], indent: int | None, mapping: bool
              ) -> None:
        self._indicator("{" if mapping else "[", True, whitespace=True)
        self.flow_level += 1
        inner = 2 if indent is None else indent + 2
        keys, values, parts = self.styles.flow_keys, self.styles.flow_values, self.parts
        items = zip(repeat(None), value) if isinstance(value, list) else value.items()
        for index, (key, child) in enumerate(items):
            if index:  # the indicator ",": no space before it
                parts.append(",")
                self.column += 1
                self.whitespace = self.indention = self.open_ended = False
            if self.column > WIDTH:
                self._write_indent(inner)
            if mapping:
                choice = keys.get(key) if type(key) is str else None
                if choice is None or choice[1] is None:
                    self._scalar(key, inner + 2, True)
                    self._indicator(":", False)
                else:
                    written = choice[1] if self.whitespace else " " + choice[1]
                    parts.append(written + ":")
                    self.column += len(written) + 1
                    self.whitespace = self.indention = self.open_ended = False
            choice = values.get(child) if type(child) is str else None
            if choice is not None and choice[1] is not None:
                written = choice[1] if self.whitespace else " " + choice[1]
                if self.column + len(written) <= (WIDTH + 2 if choice[0] else WIDTH + 1):
                    parts.append(written)
                    self.column += len(written)
                    self.whitespace = self.indention = self.open_ended = False
                    continue
            self._scalar(child, inner + 2, False)
        self.flow_level -= 1
        self._indicator("}" if mapping else "]", False)

    # Scalars.

    def _scalar(self, value: Any, indent: int, key: bool) -> None:
        kind = type(value)
        if kind is str:
            flow = self.flow_level > 0
            table = self.styles.table(key, flow)
            choice = table.get(value)
            if choice is None:
                choice = table[value] = choose(value, STR_TAG, key, flow)
            self._chosen(value, choice, indent, key)
            return
        shown = scalar_text(value)
        if shown is None:
            raise Unwritable(f"a {kind.__name__}")
        flow = self.flow_level > 0
        table = self.styles.table(key, flow)  # by (text, tag), never equal to a text
        choice = table.get(shown)
        if choice is None:
            choice = table[shown] = choose(*shown, key, flow)
        self._chosen(shown[0], choice, indent, key)

    def _chosen(self, text: str, choice: Choice, indent: int, key: bool) -> None:
        """``text`` written in the style chosen for it, from the current column."""
        style, written, fold, one_word = choice
        if style[:1] == "!":
            raise Unwritable(style[1:])
        if written is not None:
            if not self.whitespace:
                written = " " + written
            end = self.column + len(written)
            # Whole, as the emitter writes a key, or a value ending by the wrap column
            # (a quoted one's closing quote may pass it): never folded nor moved then.
            if key or end <= (WIDTH + 2 if style else WIDTH + 1):
                self.parts.append(written)
                self.column = end
                self.whitespace = self.indention = False
                if style:  # a quote is an indicator; plain text leaves open_ended
                    self.open_ended = False
                return
        if not key and not self.flow_level:
            if fold and (style == ">" or self.column + 3 + len(text) > LINE_LIMIT):
                self._folded_by_words(text, indent)
                return
            if one_word and self.column + 3 + len(text) > LINE_LIMIT:
                self._write_indent(indent)
        if style == "":
            self._plain(text, indent, not key)
        elif style == "'":
            self._single_quoted(text, indent, not key)
        elif style == '"':
            self._double_quoted(text, indent, not key)
        else:
            self._folded(text, indent)

    # The emitter's writing primitives.

    def _indicator(self, indicator: str, need_whitespace: bool, whitespace: bool = False,
                   indention: bool = False) -> None:
        data = indicator if self.whitespace or not need_whitespace else " " + indicator
        self.whitespace = whitespace
        self.indention = self.indention and indention
        self.column += len(data)
        self.open_ended = False
        self.parts.append(data)

    def _write_indent(self, indent: int) -> None:
        if not self.indention or self.column > indent or (
                self.column == indent and not self.whitespace):
            # The line break and the new line's indentation as one piece.
            self.whitespace = self.indention = True
            self.column = indent
            self.parts.append("\n" + " " * indent)
            return
        if self.column < indent:
            self.whitespace = True
            self.parts.append(" " * (indent - self.column))
            self.column = indent

    def _line_break(self) -> None:
        self.whitespace = True
        self.indention = True
        self.column = 0
        self.parts.append("\n")

    def _text(self, data: str) -> None:
        self.column += len(data)
        self.parts.append(data)

    def _plain(self, text: str, indent: int, split: bool) -> None:
        if not text:
            return
        if not self.whitespace:
            self._text(" ")
        self.whitespace = False
        self.indention = False
        if not split or self.column + len(text) <= WIDTH + 1:
            self._text(text)
            return
        for token in _TOKENS.findall(text):
            if token == " " and self.column > WIDTH:
                self._write_indent(indent)
                self.whitespace = False
                self.indention = False
            else:
                self._text(token)

    def _single_quoted(self, text: str, indent: int, split: bool) -> None:
        self._indicator("'", True)
        if not split or self.column + len(text) + text.count("'") <= WIDTH + 1:
            self._text(text.replace("'", "''"))
        else:
            position = 0
            for token in _TOKENS.findall(text):
                end = position + len(token)
                if token == " " and self.column > WIDTH and position and end != len(text):
                    self._write_indent(indent)
                else:
                    self._text(token.replace("'", "''"))
                position = end
        self._indicator("'", False)

    def _double_quoted(self, text: str, indent: int, split: bool) -> None:
        self._indicator('"', True)
        start = end = 0
        size = len(text)
        while end <= size:
            char = text[end] if end < size else None
            if char is None or char in '"\\\ufeff' or not (
                    "\x20" <= char <= "\x7e" or "\xa0" <= char <= "\ud7ff"
                    or "\ue000" <= char <= "\ufffd"):
                if start < end:
                    self._text(text[start:end])
                    start = end
                if char is not None:
                    self._text(escaped(char))
                    start = end + 1
            if 0 < end < size - 1 and (char == " " or start >= end) \
                    and self.column + (end - start) > WIDTH and split:
                data = text[start:end] + "\\"
                if start < end:
                    start = end
                self._text(data)
                self._write_indent(indent)
                self.whitespace = False
                self.indention = False
                if text[start] == " ":
                    self._text("\\")
            end += 1
        self._indicator('"', False)

    def _folded_by_words(self, text: str, indent: int) -> None:
        """render's own folding: lines cut by words within the line limit."""
        self._indicator(">" + block_hints(text), True)
        self._line_break()
        for line in folded_lines(text, LINE_LIMIT - indent):
            if line:
                self._write_indent(indent)
                self.parts.append(line)  # as render's dumper: the column is not advanced
            self._line_break()

    def _folded(self, text: str, indent: int) -> None:
        """The emitter's folded style, for a multi-line text render does not fold itself."""
        hints = block_hints(text)
        self._indicator(">" + hints, True)
        if hints.endswith("+"):
            self.open_ended = True
        self._line_break()
        leading_space = True
        tokens = _FOLD_TOKENS.findall(text)
        if not text.startswith("\n"):
            tokens.insert(0, "")  # the empty run of breaks the emitter starts in
        for index, token in enumerate(tokens):
            following = tokens[index + 1][0] if index + 1 < len(tokens) else None
            if not token or token[0] == "\n":
                if not leading_space and following is not None and following != " " \
                        and token[:1] == "\n":
                    self._line_break()
                leading_space = following == " "
                for _ in token:
                    self._line_break()
                if following is not None:
                    self._write_indent(indent)
            elif token[0] == " ":
                if len(token) == 1 and self.column > WIDTH:
                    self._write_indent(indent)
                else:
                    self._text(token)
            else:
                self._text(token)
                if following is None:
                    self._line_break()


def write_yaml(data: Mapping[str, Any], styles: ScalarStyles | None = None) -> str:
    """``data`` as render's dumper writes it, or :class:`Unwritable` (``styles``: the
    import's choices so far, kept for its next files).

    Proven equal by
    tests/authoring/openapi/test_yaml_writer.py::test_public_documents_render_the_same_bytes
    """
    return YamlWriter(styles).document(data)
