"""Document text as the model and the reviewer will read it: visible, and not too long."""

from __future__ import annotations

import re

from compiler.source.characters import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS

_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


def clean_text(text: str, limit: int) -> str:
    """``text`` without control, bidi or invisible characters (which a capc source may not
    hold), tabs as spaces, trimmed, and cut at ``limit`` characters on a word boundary."""
    text = CONTROL_CHARACTERS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = INVISIBLE_CHARACTERS.sub("", text).replace("\t", "    ")
    text = _BLANK_LINES.sub("\n\n", _TRAILING_SPACE.sub("\n", text)).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"
