"""Characters a reviewer cannot see, or sees differently from how capc reads them.

One table for the loader: controls and line breaks refused anywhere in a source file,
invisible characters refused in keys and identifiers.
"""

from __future__ import annotations

import re

# Mapping keys whose values name things (codes, tools, labels): what a reviewer reads
# there must be all there is.
IDENTIFIER_KEYS = frozenset({"code", "codes", "tool", "name", "namespace", "server_label",
                             "tool_names", "allowed_tools"})
# Characters that render as nothing (or nearly): refused in keys and identifiers.
INVISIBLE_CHARACTERS = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0]")


# C0 and C1 controls but TAB, LF and CR; NEL, LS and PS (line breaks to YAML 1.1, plain
# characters to editors and git diff: text after one looks like part of a comment but is
# read as a new line); bidi embeddings, overrides, isolates and marks (Trojan Source:
# the text shown is not the order read); a BOM after the start; non-characters.
CONTROL_CHARACTERS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]")
# The ASCII characters CONTROL_CHARACTERS lets through, derived from it: an ASCII text
# made of these alone has no refused character, which one pass over its bytes can tell.
ALLOWED_ASCII = bytes(code for code in range(128) if not CONTROL_CHARACTERS.match(chr(code)))
_LINE_BREAKS = {"\x85": "NEL", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}


def control_message(character: str) -> str:
    """The diagnostic text for a refused control, line-break or bidi character."""
    code = f"U+{ord(character):04X}"
    if character in _LINE_BREAKS:
        return (f"{code} ({_LINE_BREAKS[character]}) is not allowed: YAML 1.1 reads it as a "
                "line break that editors and diffs do not show; use a real line break")
    if character in "\u061c\u200e\u200f" or "\u202a" <= character <= "\u202e" \
            or "\u2066" <= character <= "\u2069":
        return (f"bidirectional control {code} is not allowed: it makes text display in "
                "another order than it is read")
    if character == "\ufeff":
        return f"{code} (a byte order mark) is only allowed as the first character"
    return f"control character {character!r} is not allowed"
