"""The one escaping of untrusted text on its way to a terminal, a CI log or a report.

File names, YAML strings and manifest values are written by whoever opened the pull
request. Printed raw, an ESC or CSI sequence rewrites the terminal, a CR hides what came
before it on the line, a bidi override shows text in another order than it is read, and a
newline starts a line of its own: a forged ``file:1:1: error[...]`` diagnostic, or a
GitHub workflow command (``::add-mask::``, ``::error ...``). Every reporter and every
review command (``docs``, ``diff``, ``explain``) passes what it shows through
:func:`escape_control`, so such characters appear as visible ``\\xNN`` / ``\\uNNNN``
escapes instead.
"""

from __future__ import annotations

import functools
import re

# C0 controls, DEL, C1 controls (U+009B is a one-byte CSI), NEL; LS and PS; bidi marks,
# embeddings, overrides and isolates; zero-width and other invisible characters.
_UNSAFE = ("\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e"
           "\\u2060-\\u2069\\ufeff")


@functools.cache
def _unsafe(keep_newlines: bool) -> re.Pattern[str]:
    # Compiled on first need: most runs print only printable text (see escape_control).
    return re.compile(f"[{_UNSAFE}](?<![\\n\\t])" if keep_newlines else f"[{_UNSAFE}]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_control(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control, bidi and invisible character as a visible escape.

    With ``keep_newlines``, LF and TAB stay (for multi-line output whose line structure
    the renderer made); every value inside such output must still be escaped without it.
    Printable text is returned untouched. Proven equal by
    tests/unit/test_escape_fast_path.py::test_the_fast_path_answers_as_the_pattern.
    """
    if text.isprintable():
        return text  # every character escaped is non-printable to Python (Cc, Cf, Zl, Zp, Cn)
    pattern = _unsafe(keep_newlines)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)
