"""The fast writer's choices for a scalar, made once per distinct text of an import.

What the emitter does with a scalar depends on its text and its place (a key or a value,
inside a flow collection or not), and, for the line it breaks, on the column it starts
at. The first part is :func:`choose`'s :data:`Choice`; a generated file repeats the same
texts (``type: string``, a shared description) thousands of times, so
:class:`ScalarStyles`, made for one import, keeps each text's choices and JSON length
(what :func:`compiler.authoring.openapi.yaml_layout.fits` measures) across its files.

Proven equal by
tests/authoring/openapi/test_yaml_writer.py::test_remembered_choices_are_the_choices_made_afresh
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from itertools import repeat
from typing import Any

from compiler.authoring.openapi.yaml_layout import (
    LINE_LIMIT,
    GeneratedResolver,
    ScalarAnalysis,
    foldable,
)
from compiler.authoring.openapi.yaml_layout import fits as layout_fits

STR_TAG = "tag:yaml.org,2002:str"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INT_TAG = "tag:yaml.org,2002:int"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
# The emitter's other line breaks: left to PyYAML (generated text never holds them).
_RARE_BREAKS = re.compile("[\x85\u2028\u2029]")
_ESCAPES = {"\0": "0", "\x07": "a", "\x08": "b", "\x09": "t", "\x0a": "n", "\x0b": "v",
            "\x0c": "f", "\x0d": "r", "\x1b": "e", '"': '"', "\\": "\\", "\xa0": "_"}
_RESOLVERS = GeneratedResolver.yaml_implicit_resolvers
_ANY_FIRST = tuple(_RESOLVERS.get(None, []))

# (style, written, fold, one_word): style "" plain, "'" single-quoted, '"' double-quoted,
# ">" the emitter's folding, "!" and why: Unwritable; written: the scalar as written whole
# on its line (plain or single-quoted, not empty), else None;
# fold: a block value render folds by words when long; one_word: no space or break.
Choice = tuple[str, str | None, bool, bool]


def scalar_text(value: Any) -> tuple[str, str] | None:
    """A scalar other than text as PyYAML's SafeRepresenter writes it, and its tag (None
    for a value of another type)."""
    kind = type(value)
    if kind is bool:
        return ("true" if value else "false"), _BOOL_TAG
    if value is None:
        return "null", _NULL_TAG
    if kind is int:
        return str(value), _INT_TAG
    if kind is float:
        return _float_text(value), _FLOAT_TAG
    return None


def _float_text(value: float) -> str:
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def escaped(char: str) -> str:
    """``char`` as the emitter escapes it in double quotes."""
    if char in _ESCAPES:
        return "\\" + _ESCAPES[char]
    if char <= "\xff":
        return f"\\x{ord(char):02X}"
    if char <= "\uffff":
        return f"\\u{ord(char):04X}"
    return f"\\U{ord(char):08X}"


def block_hints(text: str) -> str:
    """The indentation and chomping hints of ``text`` as a block scalar."""
    hints = ""
    if text[:1] in (" ", "\n"):
        hints += "2"
    if not text.endswith("\n"):
        hints += "-"
    elif len(text) == 1 or text[-2] == "\n":
        hints += "+"
    return hints


def detected_tag(text: str) -> str:
    """The tag a plain ``text`` would be read as."""
    for tag, pattern in (*_RESOLVERS.get(text[0] if text else "", ()), *_ANY_FIRST):
        if pattern.match(text):
            return str(tag)
    return STR_TAG


def _more_indented(text: str) -> bool:
    """A text render writes double-quoted, not folded (render.text_style)."""
    return text[:1] in (" ", "\t") or "\n " in text or "\n\t" in text


def choose(text: str, tag: str, key: bool, flow: bool) -> Choice:
    """The emitter's choice for ``text`` (a scalar of ``tag``) as a key or a value, in a
    flow collection or not (a tag to write, never needed for what the importer makes,
    and a key that is not simple are left to PyYAML)."""
    if tag == STR_TAG and _RARE_BREAKS.search(text):
        return ("!a Unicode line break", None, False, False)
    analysis = ScalarAnalysis(text)
    # The emitter counts a key's tag (``!!str``) in the 128 characters of a simple key.
    if key and (analysis.empty or analysis.multiline
                or len(text) + len(tag) - len("tag:yaml.org,2002:") + 2 >= 128):
        return ("!a key that is not simple", None, False, False)
    folded = tag == STR_TAG and "\n" in text
    if not folded and (analysis.flow_plain if flow else analysis.block_plain) \
            and detected_tag(text) == tag:
        style = ""
    elif tag != STR_TAG:
        return ("!a non-text scalar that needs a tag", None, False, False)
    elif folded and not flow and not key and analysis.block and not _more_indented(text):
        style = ">"
    elif not folded and analysis.single:
        style = "'"
    else:
        style = '"'
    written = None
    if style == "" and text:
        written = text
    elif style == "'":
        written = "'" + text.replace("'", "''") + "'"
    fold = not key and not flow and tag == STR_TAG and analysis.block and foldable(text)
    return (style, written, fold, " " not in text and "\n" not in text)


class ScalarStyles:
    """One import's choices per text and place (another scalar's by its text and tag),
    and its texts' JSON lengths (negative for a text holding a line break, which
    :func:`~compiler.authoring.openapi.yaml_layout.fits` never puts in flow style)."""

    __slots__ = ("block_keys", "block_values", "flow_keys", "flow_values", "lengths")

    def __init__(self) -> None:
        self.block_keys: dict[str | tuple[str, str], Choice] = {}
        self.block_values: dict[str | tuple[str, str], Choice] = {}
        self.flow_keys: dict[str | tuple[str, str], Choice] = {}
        self.flow_values: dict[str | tuple[str, str], Choice] = {}
        self.lengths: dict[str, int] = {}

    def table(self, key: bool, flow: bool) -> dict[str | tuple[str, str], Choice]:
        """The choices of texts in this place."""
        if flow:
            return self.flow_keys if key else self.flow_values
        return self.block_keys if key else self.block_values

    def length(self, text: str) -> int:
        """``text``'s JSON length (as ``json.dumps`` writes it), negative with a break."""
        shown = len(json.dumps(text, ensure_ascii=False))
        self.lengths[text] = shown = -shown if "\n" in text else shown
        return shown

    def fits(self, value: Mapping[Any, Any] | list[Any], column: int) -> bool:
        """:func:`~compiler.authoring.openapi.yaml_layout.fits`, the JSON lengths of texts
        remembered: a JSON object's text is its members' and 4 characters each (braces,
        ": ", ", "), an array's its items' and 2 each. Another shape is measured whole.

        Proven equal by
        tests/authoring/openapi/test_yaml_writer.py::test_remembered_lengths_measure_as_fits
        """
        kind = type(value)
        if not value or (kind is not dict and kind is not list):
            return layout_fits(value, column)
        mapping = kind is dict
        lengths = self.lengths
        shown = 0
        for key, child in zip(repeat(None), value) if isinstance(value, list) \
                else value.items():
            kind = type(child)
            if kind is str:
                size = lengths.get(child) or self.length(child)
                if size < 0:
                    return False  # a text with a line break is never in flow style
            elif kind is dict or kind is list:
                return False
            elif kind is int:
                size = len(str(child))
            elif child is None or kind is bool:
                size = 5 if child is False else 4  # null, true, false
            else:
                return layout_fits(value, column)
            if not mapping:
                shown += size + 2
            elif type(key) is str:
                shown += size + abs(lengths.get(key) or self.length(key)) + 4
            else:
                return layout_fits(value, column)
        return column + 40 + shown <= LINE_LIMIT
