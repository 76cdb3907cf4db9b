"""Document text as the model and the reviewer will read it: visible, and not too long."""

from __future__ import annotations

import re

from compiler.source.characters import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS

_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


# How much of a text is read for a result of ``limit`` characters: cleaning only removes
# characters, so a window this wide is enough unless the text is mostly invisible.
WINDOW_FACTOR = 4


def window(text: str, limit: int) -> str:
    """The part of ``text`` :func:`clean_text` reads for a result of ``limit`` characters."""
    return text[: WINDOW_FACTOR * limit + 16]


def clean_text(text: str, limit: int) -> str:
    """``text`` without control, bidi or invisible characters (which a capc source may not
    hold), tabs as spaces, trimmed, and cut at ``limit`` characters on a word boundary.

    Only the first ``WINDOW_FACTOR * limit`` characters are read: an 8 MB description
    costs what is kept, however many operations share it.
    """
    cut_early = len(text) > WINDOW_FACTOR * limit + 16
    text = window(text, limit)
    text = CONTROL_CHARACTERS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = INVISIBLE_CHARACTERS.sub("", text).replace("\t", "    ")
    text = _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()
    if len(text) < limit or (len(text) == limit and not cut_early):
        return text + ("…" if cut_early else "")
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"
