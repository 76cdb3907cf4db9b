"""``escape_control`` returns printable text untouched before compiling its pattern: the
same answer as the pattern alone, for any text (controls, bidi, invisibles, unassigned)."""

from __future__ import annotations

import re
import sys

from hypothesis import given
from hypothesis import strategies as st

from compiler.report.escape import _UNSAFE, escape_control


def _by_pattern(text: str, keep_newlines: bool) -> str:
    """The definition: every character of the class (LF and TAB kept on request) escaped."""
    pattern = re.compile(f"[{_UNSAFE}](?<![\\n\\t])" if keep_newlines else f"[{_UNSAFE}]")
    return pattern.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                  else f"\\u{ord(m.group()):04x}"), text)


def test_no_character_the_pattern_escapes_is_printable() -> None:
    # The fast path's premise, over every code point.
    pattern = re.compile(f"[{_UNSAFE}]")
    assert [hex(c) for c in range(sys.maxunicode + 1)
            if pattern.match(chr(c)) and chr(c).isprintable()] == []


_HAZARDS = st.sampled_from(["\x1b[2J", "\r", "\n", "\t", "\x9b", "\u202e", "\u2066", "\u200b",
                            "\ufeff", "\u2028", "\u00ad", "\u2065", "é", "名", "::error::"])


@given(st.lists(st.one_of(st.text(), _HAZARDS)).map("".join), st.booleans())
def test_the_fast_path_answers_as_the_pattern(text: str, keep_newlines: bool) -> None:
    assert escape_control(text, keep_newlines=keep_newlines) == _by_pattern(text,
                                                                           keep_newlines)


def test_hostile_text_is_still_escaped() -> None:
    assert escape_control("a\x1b[31mb\u202ec") == "a\\x1b[31mb\\u202ec"
    assert escape_control("line\nnext\t\r", keep_newlines=True) == "line\nnext\t\\x0d"
