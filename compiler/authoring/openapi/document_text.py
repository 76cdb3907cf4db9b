"""Document text as the model and the reviewer will read it: visible, and not too long;
and the header lines that record an import's flags, within the lint's columns."""

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


# The repository's .yamllint allows 100 columns; a comment without a space may run past
# them (yamllint's non-breakable words), so a long value gets a comment line of its own.
HEADER_COLUMNS = 100


def header_record(lead: str, value: str, tail: str) -> str:
    """The header line(s) recording ``value`` (``lead`` ends with a space, ``tail`` is the
    sentence's end): one line within :data:`HEADER_COLUMNS`, else the sentence, then the
    value alone on the next comment line. :func:`header_records` reads both forms."""
    line = f"{lead}{value}{tail}"
    if len(line) <= HEADER_COLUMNS:
        return f"{line}\n"
    return f"{_long_form(lead, tail)}\n# {value}\n"


def header_records(text: str, lead: str, tail: str) -> list[str]:
    """Every value :func:`header_record` wrote with ``lead`` and ``tail`` in ``text``'s
    header (its leading comment lines), in order."""
    lines = text.splitlines()
    long_form = _long_form(lead, tail)
    found: list[str] = []
    for index, line in enumerate(lines):
        if not line.startswith("#"):
            break  # the header is over
        if line == long_form:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if following.startswith("# "):
                found.append(following[2:])
        elif line.startswith(lead) and line.endswith(tail):
            found.append(line[len(lead):len(line) - len(tail)])
    return found


def _long_form(lead: str, tail: str) -> str:
    return f"{lead.rstrip()} {tail.strip().removesuffix('.')}:"
