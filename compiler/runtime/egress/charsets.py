"""Turning a reply's bytes into text the model and its next request can carry.

The server names the charset, so the server must not choose the work: Python's codec
registry also holds ``punycode`` (super-linear: a 0.95 MB reply took 110 s),
``unicode_escape`` and ``utf-7`` (they make lone surrogates, which httpx refuses to send
in the agent's next model request), ``idna``, compression and rot13 codecs. A reply is
decoded only with a text encoding on the allow-list below; any other name, known or not,
decodes as UTF-8 with replacement characters. Every text leaving the runtime for a model
goes through :func:`valid_unicode`, whatever route made it (a JSON ``"\\ud800"`` escape
through ``select``, a cut between two halves of a pair).
"""

from __future__ import annotations

import codecs
import re

FALLBACK = "utf-8"
# Canonical codec names (codecs.lookup(name).name): stateless or simply stateful text
# encodings whose C decoders are linear and never yield a surrogate with errors="replace".
ALLOWED_CODECS = frozenset({
    "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
    "utf-32-be", "ascii", "iso8859-1",
    *(f"iso8859-{part}" for part in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16)),
    *(f"cp{page}" for page in (1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258,
                               437, 850, 852, 866, 874)),
    "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic",
    # CJK multibyte codecs: C state machines, linear, common in real APIs.
    "shift_jis", "cp932", "euc_jp", "gb2312", "gbk", "gb18030", "big5", "cp950",
    "euc_kr", "cp949",
})
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]{1,40})", re.IGNORECASE)
_SURROGATE = re.compile("[\ud800-\udfff]")


def allowed_codec(name: str) -> str:
    """The canonical name of ``name`` when it is an allowed text encoding, else UTF-8."""
    try:
        canonical = codecs.lookup(name).name
    except (LookupError, ValueError):
        return FALLBACK
    return canonical if canonical in ALLOWED_CODECS else FALLBACK


def response_charset(content_type: str) -> str:
    """The codec to decode a body whose Content-Type is ``content_type`` with."""
    match = _CHARSET.search(content_type[:1024])
    return allowed_codec(match.group(1)) if match else FALLBACK


def decode_body(content: bytes, content_type: str) -> str:
    """``content`` as text: the named charset if allowed, else UTF-8; never a surrogate."""
    return valid_unicode(content.decode(response_charset(content_type), errors="replace"))


def valid_unicode(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a pair becomes its character).

    One C-speed check in the common case; linear either way.
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    # Pairs written as two code points (JSON "\\ud83d\\ude00" through some decoders) join;
    # what stays alone becomes U+FFFD, so the text encodes as UTF-8 everywhere.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
