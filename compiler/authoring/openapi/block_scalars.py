"""The scalars and one-line flow collections of :mod:`block_yaml`'s one-pass reader:
plain, quoted (one line or across lines, with escapes) and block scalars, and flow
collections of scalars on one line, read as the strict composer and the OpenAPI converter
read them, or given up on (:class:`OutsideTheSubset`). :class:`ScalarReading` is the part
of the reader that reads them; ``block_yaml._Reader`` adds the block collections.
"""

from __future__ import annotations

import re
from typing import Any, TypeAlias

from compiler.source.yaml_resolver import (
    BOOL_TAG,
    FLOAT_TAG,
    INT_TAG,
    NULL_TAG,
    plain_tag,
)

# Deeper than this, the general path decides (the converter refuses past 256 levels).
MAX_DEPTH = 120
# libyaml refuses a key longer than 1024 characters; well under it, the general path decides.
MAX_KEY_LENGTH = 1000
# A plain text up to this long has its value remembered for the rest of one read.
REMEMBERED_LENGTH = 64

_DOUBLE_BODY = re.compile(r'(?:[^"\\]|\\.)*')
_SINGLE_BODY = re.compile(r"(?:[^']|'')*")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_ESCAPED = {
    "0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "n": "\n", "v": "\x0b", "f": "\x0c",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
    "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
# First characters a plain scalar cannot have here (quotes, block and flow openers are
# read elsewhere; "-", "?" and ":" only when a space follows).
NOT_PLAIN = frozenset(",[]{}#&*!|>'\"%@`")
_BLOCK_HEADER = re.compile(r"([|>])([-+]?)([1-9]?)([-+]?)( *(?:#.*)?)$")


class OutsideTheSubset(Exception):
    """The text uses YAML the one-pass reader does not read: read it the general way."""


def scalar_value(tag: str, text: str) -> Any:
    """The value of a scalar of ``tag`` as the OpenAPI converter gives it (YAML 1.2 core;
    YAML 1.1 forms such as ``yes`` or ``0777`` stay strings)."""
    try:
        if tag == INT_TAG and len(text) <= 64:
            return int(text, 0) if text[:2] in ("0x", "0o") else int(text)
        if tag == FLOAT_TAG:
            number = float(text.replace(".inf", "inf").replace(".nan", "nan")
                           .replace(".Inf", "inf").replace(".INF", "inf"))
            return number if number == number and abs(number) != float("inf") else text
    except ValueError:
        return text
    if tag == BOOL_TAG:
        return text.lower() == "true"
    if tag == NULL_TAG:
        return None
    return text


def start_at(line: int, column: int) -> int:
    return (line << 32) | column


# Where a value starts (line and column from 0, packed in one int); a mapping or sequence
# with members also keeps its members' (by key, or in order).
Position: TypeAlias = "int | tuple[int, dict[str, Position] | list[Position]]"



class ScalarReading:
    """The scalar readers of one read of one text (``block_yaml._Reader``, whose fields
    these methods use, is the class that is made)."""

    text: str
    lines: list[str]
    indents: list[int]
    final_break: bool
    tabs: bool
    tab_lines: int
    values: dict[str, Any]

    def _block(self, index: int, column: int, parent: int, depth: int
               ) -> tuple[Any, Position, int]:
        raise NotImplementedError  # the reader's own (block_yaml._Reader)

    def _key(self, line: str, column: int) -> tuple[str, int] | None:
        raise NotImplementedError  # the reader's own (block_yaml._Reader)

    def _scalar(self, index: int, column: int, parent: int, depth: int
                ) -> tuple[Any, Position, int]:
        """A scalar or one-line flow collection at ``column`` of line ``index``; ``parent``
        is the column of the collection holding it."""
        line = self.lines[index]
        first = line[column]
        if first == '"' or first == "'":
            quoted = self._quoted(line, column)
            if quoted is None:
                return self._quoted_across_lines(index, column, parent)
            value, end = quoted
            expect_end(line, end)
            return value, start_at(index, column), index + 1
        if first == "|" or first == ">":
            return self._block_scalar(index, column, parent)
        if first == "[" or first == "{":
            return self._flow(index, column, depth)
        if first in NOT_PLAIN or (first in "-?:" and line[column + 1:column + 2] in ("", " ")):
            raise OutsideTheSubset("an anchor, alias, tag or indicator")
        return self._plain(index, column, parent)

    def _plain(self, index: int, column: int, parent: int) -> tuple[Any, Position, int]:
        lines, indents, count = self.lines, self.indents, len(self.lines)
        line = lines[index]
        comment = line.find(" #", column)
        text = line[column:comment if comment >= 0 else len(line)].rstrip(" ")
        if ": " in text or text[-1] == ":":
            raise OutsideTheSubset("a plain scalar holding ': '")
        following = index + 1
        if following < count and (indents[following] > parent or indents[following] < 0):
            parts = [text]
            while True:
                blank = following
                while blank < count and indents[blank] < 0:
                    blank += 1
                if blank == count:
                    break
                indent = indents[blank]
                more = lines[blank]
                if indent <= parent or more[indent] == "#":
                    break
                if comment >= 0:
                    raise OutsideTheSubset("a plain scalar continued after a comment")
                comment = more.find(" #", indent)
                segment = more[indent:comment if comment >= 0 else len(more)].rstrip(" ")
                if ": " in segment or segment[-1] == ":":
                    raise OutsideTheSubset("a plain scalar holding ': '")
                parts.append("\n" * (blank - following) if blank > following else " ")
                parts.append(segment)
                following = blank + 1
            if len(parts) > 1:
                joined = "".join(parts)
                return (scalar_value(plain_tag(joined), joined), start_at(index, column),
                        following)
        return self._plain_value(text), start_at(index, column), index + 1

    def _plain_value(self, text: str) -> Any:
        known = self.values.get(text, self)
        if known is not self:
            return known
        value = scalar_value(plain_tag(text), text)
        if len(text) <= REMEMBERED_LENGTH:
            self.values[text] = value
        return value

    def _quoted(self, line: str, column: int) -> tuple[str, int] | None:
        """A quoted scalar closed on its line: its text and the column past it."""
        quote = line[column]
        end = (_SINGLE_BODY if quote == "'" else _DOUBLE_BODY).match(  # type: ignore[union-attr]
            line, column + 1).end()
        if line[end:end + 1] != quote:
            return None
        text = line[column + 1:end]
        if quote == "'":
            return text.replace("''", "'"), end + 1
        if "\\" in text:
            text = _ESCAPE.sub(_unescaped, text)
        return text, end + 1

    def _quoted_across_lines(self, index: int, column: int, parent: int
                             ) -> tuple[Any, Position, int]:
        """A quoted scalar whose closing quote is on a later line: each line's text, its
        spaces at the fold trimmed, joined by a space (a line break followed by blank lines:
        one line break per blank line); a double-quoted line may end with an escaped break."""
        lines, indents, count = self.lines, self.indents, len(self.lines)
        quote = lines[index][column]
        double = quote == '"'
        body = _DOUBLE_BODY if double else _SINGLE_BODY
        parts: list[str] = []
        start = start_at(index, column)
        at, line, separator = column + 1, lines[index], ""
        while True:
            end = body.match(line, at).end()  # type: ignore[union-attr]
            piece = line[at:end]
            closed = end < len(line) and line[end] == quote
            escaped_break = double and not closed and end == len(line) - 1
            if end < len(line) and not closed and not escaped_break:
                raise OutsideTheSubset("a quoted scalar's text")
            if not closed and not escaped_break:
                piece = piece.rstrip(" ")
                if double and piece.endswith("\\"):
                    raise OutsideTheSubset("an escape before a quoted scalar's fold")
            if double and "\\" in piece:
                piece = _ESCAPE.sub(_unescaped, piece)
            elif not double:
                piece = piece.replace("''", "'")
            parts.append(separator)
            parts.append(piece)
            if closed:
                expect_end(line, end + 1)
                return "".join(parts), start, index + 1
            index += 1
            blanks = 0
            while index < count and indents[index] < 0:
                blanks += 1
                index += 1
            if index == count or indents[index] <= parent:
                raise OutsideTheSubset("a quoted scalar's fold outside its collection")
            separator = "\n" * blanks if blanks or escaped_break else " "
            line, at = lines[index], indents[index]

    def _block_scalar(self, index: int, column: int, parent: int) -> tuple[Any, Position, int]:
        """A ``|`` or ``>`` scalar, its lines joined as libyaml joins them: a line of
        spaces no longer than the indentation is a blank line, a longer one is text."""
        lines, indents, count = self.lines, self.indents, len(self.lines)
        header = _BLOCK_HEADER.match(lines[index], column)
        if header is None or (header.group(2) and header.group(4)):
            raise OutsideTheSubset("a block scalar's header")
        folded = header.group(1) == ">"
        chomping = header.group(2) or header.group(4)
        following = index + 1
        if header.group(3):
            indent = max(parent, 0) + int(header.group(3))
        else:
            first = following
            while first < count and indents[first] < 0:
                first += 1
            if first == count or indents[first] <= max(parent, 0):
                # No text: the blank lines are its line breaks (kept only by "+").
                if first == count and not self.final_break and first > following:
                    raise OutsideTheSubset("a block scalar ending the text without a break")
                return ("\n" * (first - following) if chomping == "+" else "",
                        start_at(index, column), first)
            indent = indents[first]
            if lines[first][indent] == "\t":
                raise OutsideTheSubset("a tab where the indentation is found")
        parts: list[str] = []
        leading_break = ""
        trailing = 0
        leading_blank = False
        at = following
        while at < count and indents[at] < 0 and len(lines[at]) <= indent:
            trailing += 1
            at += 1
        if not header.group(3) and at < count and indents[at] < 0:
            raise OutsideTheSubset("spaces past the indentation found after them")
        while at < count and (indents[at] >= indent or (
                indents[at] < 0 and len(lines[at]) > indent)):
            line = lines[at]
            trailing_blank = line[indent] == " " or line[indent] == "\t"
            if folded and leading_break and not leading_blank and not trailing_blank:
                if not trailing:
                    parts.append(" ")
            else:
                parts.append(leading_break)
            leading_break = ""
            if trailing:
                parts.append("\n" * trailing)
                trailing = 0
            leading_blank = trailing_blank
            parts.append(line[indent:])
            if self.tabs and "\t" in line:
                self.tab_lines += 1
            at += 1
            if at == count and not self.final_break:
                raise OutsideTheSubset("a block scalar ending the text without a line break")
            leading_break = "\n"
            while at < count and indents[at] < 0 and len(lines[at]) <= indent:
                trailing += 1
                at += 1
        if at < count and indents[at] > max(parent, -1) and indents[at] < indent \
                and lines[at][indents[at]] != "#":
            raise OutsideTheSubset("a block scalar's text less indented than its first line")
        if chomping != "-":
            parts.append(leading_break)
        if chomping == "+":
            if at == count and not self.final_break and trailing:
                raise OutsideTheSubset("a block scalar ending the text without a line break")
            parts.append("\n" * trailing)
        return "".join(parts), start_at(index, column), at

    def _flow(self, index: int, column: int, depth: int) -> tuple[Any, Position, int]:
        """``[]``, ``{}``, ``[a, 'b', "c"]`` or ``{a: b, 'c': "d"}`` on one line (scalars
        only)."""
        line = self.lines[index]
        opening = line[column]
        closing = "]" if opening == "[" else "}"
        at = after_spaces(line, column + 1)
        if line[at:at + 1] == closing:
            expect_end(line, at + 1)
            empty: dict[str, Any] | list[Any] = {} if opening == "{" else []
            return empty, start_at(index, column), index + 1
        if depth + 1 > MAX_DEPTH:
            raise OutsideTheSubset("nesting")
        result: dict[str, Any] | list[Any] = {} if opening == "{" else []
        positions: dict[str, Position] | list[Position] = {} if opening == "{" else []
        while True:
            key = ""
            if isinstance(result, dict):
                key, _, end = self._flow_item(line, at, ",}:")
                end = after_spaces(line, end)
                if line[end:end + 2] != ": " or key in result:
                    raise OutsideTheSubset("a flow mapping's key")
                at = after_spaces(line, end + 2)
            text, plain, end = self._flow_item(line, at, ",]" if opening == "[" else ",}")
            value = self._plain_value(text) if plain else text
            if isinstance(result, dict) and isinstance(positions, dict):
                result[key] = value
                positions[key] = start_at(index, at)
            elif isinstance(result, list) and isinstance(positions, list):
                result.append(value)
                positions.append(start_at(index, at))
            end = after_spaces(line, end)
            separator = line[end:end + 1]
            if separator == closing:
                expect_end(line, end + 1)
                break
            if separator != ",":
                raise OutsideTheSubset("a flow collection across lines")
            at = after_spaces(line, end + 1)
            if line[at:at + 1] in ("", "]", "}", ","):
                raise OutsideTheSubset("an empty flow collection item")
        return result, (start_at(index, column), positions), index + 1

    def _flow_item(self, line: str, at: int, stops: str) -> tuple[str, bool, int]:
        """A quoted or plain scalar of a flow collection: its text, whether it was plain,
        and the column past it (plain text ends before one of ``stops``)."""
        first = line[at:at + 1]
        if first == '"' or first == "'":
            quoted = self._quoted(line, at)
            if quoted is None:
                raise OutsideTheSubset("a quoted scalar across lines")
            return quoted[0], False, quoted[1]
        end = at
        while end < len(line) and line[end] not in stops:
            end += 1
        text = line[at:end].rstrip(" ")
        if not text or text[0] in NOT_PLAIN or (text[0] in "-?" and text[1:2] in ("", " ")) \
                or any(character in text for character in ":[]{}#"):
            raise OutsideTheSubset("a flow collection item beyond plain words")
        return text, True, end


def after_spaces(line: str, at: int) -> int:
    while at < len(line) and line[at] == " ":
        at += 1
    return at


def indent_of(line: str) -> int:
    stripped = line.lstrip(" ")
    return len(line) - len(stripped) if stripped else -1


def expect_end(line: str, end: int) -> None:
    """Only spaces, or spaces and a comment, may follow a scalar on its line."""
    rest = line[end:]
    stripped = rest.lstrip(" ")
    if stripped and not (stripped[0] == "#" and len(stripped) < len(rest)):
        raise OutsideTheSubset("text after a scalar")


def _unescaped(match: re.Match[str]) -> str:
    escape = match.group(1)
    if len(escape) == 1:
        known = _ESCAPED.get(escape)
        if known is None:
            raise OutsideTheSubset("an escape outside the subset")
        return known
    code = int(escape[1:], 16)
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        raise OutsideTheSubset("an escaped surrogate")
    return chr(code)

