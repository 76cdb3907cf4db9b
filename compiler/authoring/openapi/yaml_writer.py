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
from typing import Any

from compiler.authoring.openapi.yaml_layout import (
    LINE_LIMIT,
    WIDTH,
    GeneratedResolver,
    ScalarAnalysis,
    fits,
    foldable,
    folded_lines,
)

_STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INT_TAG = "tag:yaml.org,2002:int"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
# The emitter's other line breaks: left to PyYAML (generated text never holds them).
_RARE_BREAKS = re.compile("[\x85\u2028\u2029]")
_TOKENS = re.compile(r" +|[^ ]+")
_FOLD_TOKENS = re.compile(r"\n+| +|[^ \n]+")
_ESCAPES = {"\0": "0", "\x07": "a", "\x08": "b", "\x09": "t", "\x0a": "n", "\x0b": "v",
            "\x0c": "f", "\x0d": "r", "\x1b": "e", '"': '"', "\\": "\\", "\xa0": "_"}


class Unwritable(Exception):
    """A value this writer leaves to PyYAML."""


def _float_text(value: float) -> str:
    """A float as PyYAML's SafeRepresenter writes it."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


class YamlWriter:
    """One document's text, written as the emitter would write it (its column, whether
    the last character was a space or an indentation, kept as the emitter keeps them)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.open_ended = False
        self.flow_level = 0
        self._resolvers = GeneratedResolver.yaml_implicit_resolvers

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
        mapping = isinstance(value, Mapping)
        if mapping or isinstance(value, list):
            if not value:
                self._indicator("{" if mapping else "[", True, whitespace=True)
                self._indicator("}" if mapping else "]", False)
            elif fits(value, column):
                self._flow(value, indent)
            elif mapping:
                self._block_mapping(value, indent, column + 2)
            else:
                self._block_sequence(value, indent, column + 2)
        else:
            self._scalar(value, 2 if indent is None else indent + 2, key=False)

    def _block_mapping(self, value: Mapping[Any, Any], indent: int | None, column: int
                       ) -> None:
        indent = 0 if indent is None else indent + 2
        for key, child in value.items():
            self._write_indent(indent)
            self._scalar(key, indent + 2, key=True)
            self._indicator(":", False)
            self._node(child, indent, column)

    def _block_sequence(self, value: list[Any], indent: int | None, column: int) -> None:
        indent = 0 if indent is None else indent + 2
        for item in value:
            self._write_indent(indent)
            self._indicator("-", True, indention=True)
            self._node(item, indent, column)

    def _flow(self, value: Mapping[Any, Any] | list[Any], indent: int | None) -> None:
        mapping = isinstance(value, Mapping)
        self._indicator("{" if mapping else "[", True, whitespace=True)
        self.flow_level += 1
        inner = 2 if indent is None else indent + 2
        items = value.items() if isinstance(value, Mapping) else ((None, v) for v in value)
        for index, (key, child) in enumerate(items):
            if index:
                self._indicator(",", False)
            if self.column > WIDTH:
                self._write_indent(inner)
            if mapping:
                self._scalar(key, inner + 2, key=True)
                self._indicator(":", False)
            self._scalar(child, inner + 2, key=False)
        self.flow_level -= 1
        self._indicator("}" if mapping else "]", False)

    # Scalars.

    def _scalar(self, value: Any, indent: int, key: bool) -> None:
        kind = type(value)
        if kind is str:
            text, tag = value, _STR_TAG
            if _RARE_BREAKS.search(text):
                raise Unwritable("a Unicode line break")
        elif kind is bool:
            text, tag = ("true" if value else "false"), _BOOL_TAG
        elif value is None:
            text, tag = "null", _NULL_TAG
        elif kind is int:
            text, tag = str(value), _INT_TAG
        elif kind is float:
            text, tag = _float_text(value), _FLOAT_TAG
        else:
            raise Unwritable(f"a {kind.__name__}")
        analysis = ScalarAnalysis(text)
        # The emitter counts a key's tag (``!!str``) in the 128 characters of a simple key.
        if key and (analysis.empty or analysis.multiline
                    or len(text) + len(tag) - len("tag:yaml.org,2002:") + 2 >= 128):
            raise Unwritable("a key that is not simple")
        folded = tag == _STR_TAG and "\n" in text
        style = self._style(text, tag, analysis, folded, key)
        if not key and not self.flow_level:
            if (tag == _STR_TAG and analysis.block and foldable(text)
                    and (style == ">" or self.column + 3 + len(text) > LINE_LIMIT)):
                self._folded_by_words(text, indent)
                return
            if " " not in text and "\n" not in text and \
                    self.column + 3 + len(text) > LINE_LIMIT:
                self._write_indent(indent)
        if style == "":
            self._plain(text, indent, not key)
        elif style == "'":
            self._single_quoted(text, indent, not key)
        elif style == '"':
            self._double_quoted(text, indent, not key)
        else:
            self._folded(text, indent)

    def _style(self, text: str, tag: str, analysis: ScalarAnalysis, folded: bool, key: bool) -> str:
        """The emitter's choice of style ("" plain), or Unwritable where it would write a
        tag (never for what the importer makes)."""
        implicit = self._detected_tag(text) == tag
        if not folded and implicit and not (key and (analysis.empty or analysis.multiline)) \
                and (analysis.flow_plain if self.flow_level else analysis.block_plain):
            return ""
        if tag != _STR_TAG:
            raise Unwritable("a non-text scalar that needs a tag")
        if folded and not self.flow_level and not key and analysis.block:
            return ">"
        if not folded and analysis.single and not (key and analysis.multiline):
            return "'"
        return '"'

    def _detected_tag(self, text: str) -> str:
        resolvers = self._resolvers.get(text[0] if text else "", [])
        for tag, pattern in (*resolvers, *self._resolvers.get(None, [])):
            if pattern.match(text):
                return str(tag)
        return _STR_TAG

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
            self._line_break()
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
                    self._text(_escaped(char))
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
        self._indicator(">" + _block_hints(text), True)
        self._line_break()
        for line in folded_lines(text, LINE_LIMIT - indent):
            if line:
                self._write_indent(indent)
                self.parts.append(line)  # as render's dumper: the column is not advanced
            self._line_break()

    def _folded(self, text: str, indent: int) -> None:
        """The emitter's folded style, for a multi-line text render does not fold itself."""
        hints = _block_hints(text)
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


def _escaped(char: str) -> str:
    if char in _ESCAPES:
        return "\\" + _ESCAPES[char]
    if char <= "\xff":
        return f"\\x{ord(char):02X}"
    if char <= "\uffff":
        return f"\\u{ord(char):04X}"
    return f"\\U{ord(char):08X}"


def _block_hints(text: str) -> str:
    hints = ""
    if text[:1] in (" ", "\n"):
        hints += "2"
    if not text.endswith("\n"):
        hints += "-"
    elif len(text) == 1 or text[-2] == "\n":
        hints += "+"
    return hints


def write_yaml(data: Mapping[str, Any]) -> str:
    """``data`` as render's dumper writes it, or :class:`Unwritable`.

    Proven equal by
    tests/authoring/openapi/test_yaml_writer.py::test_public_documents_render_the_same_bytes
    """
    return YamlWriter().document(data)
