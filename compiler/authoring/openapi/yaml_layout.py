"""The layout rules of a generated file's YAML, shared by its two writers.

:mod:`render`'s PyYAML dumper (the general path) and :mod:`yaml_writer` (the fast path)
both read these: where a line ends, which text is folded and how, which collection is
written in flow style on its key's line; and (for the fast path) what the emitter's scalar
analysis allows a text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

from compiler.source.yaml_resolver import StrictResolver

# The emitter breaks a line at the first space past this column, so a line ends within a
# word of it; longer text is folded by :func:`folded_lines` instead.
WIDTH = 80
LINE_LIMIT = 100


def foldable(text: str) -> bool:
    """Whether :func:`folded_lines` keeps ``text`` exactly: words of one line separated by
    single spaces, no line starting or ending with a space, no empty first or last line."""
    lines = text.split("\n")
    return (" " in text or "\n" in text) and bool(lines[0]) and bool(lines[-1]) and all(
        line == line.strip(" ") and "  " not in line for line in lines)


def folded_lines(text: str, width: int) -> list[str]:
    """The lines of a folded block scalar (``>``) reading as ``text``: each line of the
    text cut before a word that would pass ``width`` (a longer word stands alone), and
    an empty line for each line break (folding reads a single break as a space)."""
    lines: list[str] = []
    for index, line in enumerate(text.split("\n")):
        if index:
            lines.append("")
        current = ""
        for word in line.split(" ") if line else ():
            if current and len(current) + 1 + len(word) > width:
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        if current:
            lines.append(current)
    return lines


def fits(value: Mapping[str, Any] | list[Any], column: int) -> bool:
    """Whether ``value`` holds scalars only and its flow text (measured as JSON, never
    shorter than YAML's) ends before :data:`LINE_LIMIT` (its key counted at 40)."""
    children = value.values() if isinstance(value, Mapping) else value
    if any(isinstance(child, (Mapping, list)) or (isinstance(child, str) and "\n" in child)
           for child in children):
        return False
    try:
        shown = len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return False
    return column + 40 + shown <= LINE_LIMIT


class GeneratedResolver(yaml.resolver.Resolver):
    """What a plain scalar would be read as, for choosing whether text needs quotes: PyYAML's
    YAML 1.1 answer first, then capc's own reader's (YAML 1.2, and the 1.1 forms it refuses).

    Text is written plain only when both read it back as text: ``08`` (text in 1.1, refused
    as ambiguous octal by capc), ``1e3`` (text in 1.1, a float in 1.2) and ``0o17`` are
    quoted, so a generated file never holds a value its own compile reads otherwise.
    """


for _first, _resolvers in StrictResolver.yaml_implicit_resolvers.items():
    for _tag, _pattern in _resolvers:
        GeneratedResolver.add_implicit_resolver(_tag, _pattern, [_first])


# A character PyYAML writes only inside double quotes (allow_unicode: most of Unicode is
# written as it is; the byte order mark, surrogates and U+10FFFF are not).
_SPECIAL = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010fffe]|\ufeff")
# The emitter's whitespace around an indicator: NUL, space, tab and the line breaks.
_WHITE = chr(0) + " \t" + "\r\n"
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_FLOW_INDICATORS = re.compile(r"[,?\[\]{}:]")
_BLOCK_COLON = re.compile(":(?:[" + re.escape(_WHITE) + r"]|\Z)")
_COMMENT = re.compile("[" + re.escape(_WHITE) + "]#")
# A text made only of these (and not starting with "-") needs no look at indicators.
_SIMPLE = re.compile(r"[A-Za-z0-9_./()+=$^~\-]+")


class ScalarAnalysis:
    """What a text allows (the emitter's scalar analysis), decided once per text."""

    __slots__ = ("block", "block_plain", "empty", "flow_plain", "multiline", "single")

    def __init__(self, text: str) -> None:
        self.empty = not text
        self.multiline = "\n" in text
        if self.empty:
            self.flow_plain, self.block_plain, self.single, self.block = False, True, True, False
            return
        if _SIMPLE.fullmatch(text) and text[0] != "-" and not text.startswith("..."):
            self.flow_plain = self.block_plain = self.single = self.block = True
            return
        first = text[0]
        after_first = len(text) == 1 or text[1] in _WHITE
        flow = block = text.startswith(("---", "..."))
        if first in _FIRST_INDICATORS or (first == "-" and after_first):
            flow = block = True
        elif first in "?:":
            flow = True
            block = block or after_first
        rest = text[1:]
        if _FLOW_INDICATORS.search(rest):
            flow = True
        if _BLOCK_COLON.search(text, 1) or _COMMENT.search(text):
            flow = block = True
        special = _SPECIAL.search(text) is not None
        edge_space = text[0] == " " or text[-1] == " "
        edge_break = text[0] == "\n" or text[-1] == "\n"
        plain = not (edge_space or edge_break or "\n " in text or " \n" in text or special
                     or self.multiline)
        self.flow_plain = plain and not flow
        self.block_plain = plain and not block
        self.single = not ("\n " in text or " \n" in text or special)
        self.block = not (text[-1] == " " or " \n" in text or special)
