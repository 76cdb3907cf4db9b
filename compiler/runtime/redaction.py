"""Masking resolved secrets in every spelling a server may echo them in, and cutting safely.

A secret is known as a sequence of *positions*; each position lists every spelling of one
character: the character itself, percent-encoding in either case (``+`` for a space), JSON
escapes (``\\/``, ``\\uXXXX`` in either case, surrogate pairs), and HTML character
references (decimal, hex, named). Matching position by position masks a secret however
many of its characters were escaped, and the same table answers the other question a cut
asks: does the text end with the start of a secret? Base64 spellings (the secret alone,
standard or URL-safe, and the secret inside a longer encoded value such as Basic auth's
``user:secret``) are literal sequences in the same table.

Every cut of a text a model or a log line sees goes through :func:`masked_cut`: mask the
whole text first, then cut, then drop the start of a secret the cut may have split. That
is one pass over the last longest-spelling characters: the earliest position from which
the rest of the text could begin a spelling is where a split secret would begin, and what
precedes it is kept (a secret that began earlier would make that earlier position the
start). Remote text is hostile: nothing here repeats over a text.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Iterable

from compiler.runtime.records import record

REDACTED = "[redacted]"
# A resolved value shorter than this cannot be a credential, and masking every "1" or
# "eu" in a response would make outputs unreadable.
MIN_SECRET_LENGTH = 4
_JSON_SHORT_ESCAPES = {
    '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
    "\r": "\\r", "\t": "\\t",
}


@functools.cache
def _named_entities() -> dict[str, tuple[str, ...]]:
    """Character -> every HTML5 named reference that spells exactly it (``&amp;``, ``&amp``).

    Built on first use, not at import: the compile side imports this module for its
    constants and never masks a secret (the table cost every compile a few ms)."""
    import html.entities

    found: dict[str, list[str]] = {}
    for name, value in html.entities.html5.items():
        if len(value) == 1:
            found.setdefault(value, []).append("&" + name)
    return {character: tuple(sorted(names)) for character, names in found.items()}


Position = tuple[str, ...]


def character_spellings(character: str) -> Position:
    """Every spelling of one character a server may echo (the character itself first)."""
    spellings = [character]
    encoded = character.encode("utf-8")
    percent = "".join(f"%{byte:02X}" for byte in encoded)
    spellings += [percent, percent.lower()]
    if character == " ":
        spellings.append("+")
    if character in _JSON_SHORT_ESCAPES:
        spellings.append(_JSON_SHORT_ESCAPES[character])
    code = ord(character)
    units = [code] if code < 0x10000 else [
        0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
    ]
    escaped = "".join(f"\\u{unit:04X}" for unit in units)
    spellings += [escaped, escaped.lower()]
    hexadecimal = f"{code:X}"
    spellings += [f"&#{code};", f"&#x{hexadecimal};", f"&#x{hexadecimal.lower()};",
                  f"&#X{hexadecimal};", f"&#X{hexadecimal.lower()};"]
    spellings += _named_entities().get(character, ())
    return tuple(dict.fromkeys(spellings))


def _literal(text: str) -> tuple[Position, ...]:
    return tuple((character,) for character in text)


def _base64_forms(raw: bytes) -> set[str]:
    """The base64 texts that spell ``raw``: alone, and embedded at each byte alignment."""
    forms: set[str] = set()
    for alphabet in (base64.b64encode, base64.urlsafe_b64encode):
        alone = alphabet(raw).decode("ascii")
        forms |= {alone, alone.rstrip("=")}
        for offset in (1, 2):
            # Only the characters all of whose six bits come from the secret are fixed,
            # whatever precedes it (a user name) or follows it.
            encoded = alphabet(bytes(offset) + raw + bytes(2)).decode("ascii")
            start, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6
            forms.add(encoded[start:end])
            # The secret at the end of the value (``user:secret``): its padded tail is fixed.
            tail = alphabet(bytes(offset) + raw).decode("ascii")[start:]
            forms |= {tail, tail.rstrip("=")}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def _decoded_base64(value: str) -> list[str]:
    """The text a base64 setting (a Basic credential) stands for, and its password part."""
    if len(value) % 4 or not re.fullmatch(r"[A-Za-z0-9+/_-]+=*", value):
        return []
    try:
        text = base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
        decoded = text.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return []
    if not decoded.isprintable():
        return []
    return [decoded, decoded.partition(":")[2]]


def secret_sequences(value: str) -> list[tuple[Position, ...]]:
    """Every spelling of ``value`` as position sequences; empty for a value too short."""
    if len(value) < MIN_SECRET_LENGTH:
        return []
    values = [value] + [part for part in _decoded_base64(value) if len(part) >= MIN_SECRET_LENGTH]
    sequences: list[tuple[Position, ...]] = []
    for text in dict.fromkeys(values):
        sequences.append(tuple(character_spellings(character) for character in text))
        sequences += [_literal(form) for form in sorted(_base64_forms(text.encode("utf-8")))]
    return sequences


def _pattern(sequences: Iterable[tuple[Position, ...]]) -> re.Pattern[str]:
    alternatives = [re.escape(REDACTED)]  # an existing marker is kept whole, never re-masked
    for sequence in sorted(sequences, key=len, reverse=True):
        parts = []
        for position in sequence[1:]:
            # Longest spelling first, so "&amp;" wins over "&amp".
            spellings = sorted(position, key=len, reverse=True)
            parts.append(
                re.escape(spellings[0]) if len(spellings) == 1
                else "(?:" + "|".join(map(re.escape, spellings)) + ")"
            )
        rest = "".join(parts)
        # One alternative per spelling of the first character: when every alternative
        # starts with a literal, the regex engine skips ahead to the possible first
        # characters instead of trying each alternative at every position.
        alternatives += [re.escape(first) + rest
                         for first in sorted(sequence[0], key=len, reverse=True)]
    return re.compile("|".join(alternatives))


def _reaches_end(text: str, start: int, sequence: tuple[Position, ...]) -> bool:
    """True when ``text[start:]`` is a non-empty proper start of a spelling of ``sequence``."""
    frontier = {start}
    for position in sequence:
        following = set()
        for at in frontier:
            rest = len(text) - at
            for spelling in position:
                if rest < len(spelling):
                    if rest and spelling.startswith(text[at:]):
                        return True
                elif text.startswith(spelling, at):
                    if at + len(spelling) == len(text) and at + len(spelling) > start:
                        return True
                    following.add(at + len(spelling))
        if not following:
            return False
        frontier = following
    return False  # the whole secret matched: masking already replaced it


@record(frozen=True, slots=True)
class _Spelled:
    """What one secret's spellings tell a Redactor: the sequences, the longest spelling,
    the characters a spelling can start with."""

    sequences: tuple[tuple[Position, ...], ...]
    longest: int
    first_characters: frozenset[str]


@functools.lru_cache(maxsize=256)
def _spelled(value: str) -> _Spelled:
    # Spelling a secret costs about half a millisecond, and a process sees the same few
    # secrets in context after context and request after request: each is spelled once.
    sequences = tuple(secret_sequences(value))
    longest = max((sum(max(map(len, position)) for position in sequence)
                   for sequence in sequences), default=0)
    first = frozenset(spelling[0] for sequence in sequences for spelling in sequence[0])
    return _Spelled(sequences, longest, first)


@functools.lru_cache(maxsize=256)
def _secret_pattern(value: str) -> re.Pattern[str]:
    # Compiling one secret's pattern takes tens of milliseconds; compiled once per secret.
    return _pattern(_spelled(value).sequences)


def replace_spellings(text: str, value: str, replacement: str) -> str:
    """``text`` with every spelling of ``value`` that :class:`Redactor` masks replaced by
    ``replacement`` (a tool test writes a setting as its ``${NAME}``). A ``[redacted]``
    marker is kept; a value shorter than MIN_SECRET_LENGTH is left, as a Redactor does."""
    if len(value) < MIN_SECRET_LENGTH:
        return text
    return _secret_pattern(value).sub(
        lambda found: found.group(0) if found.group(0) == REDACTED else replacement, text)


class Redactor:
    """Masks the resolved setting values of one context in any text shown or logged.

    It grows as settings are resolved, so it is the one mutable object a context owns.
    Every spelling in the table above is masked, in any mix; values shorter than
    MIN_SECRET_LENGTH are not (they would mask ordinary words and digits).
    """

    def __init__(self) -> None:
        self._values: list[str] = []
        self._sequences: list[tuple[Position, ...]] = []
        self._longest = 0
        self._first_characters: set[str] = set()

    def add(self, value: str) -> None:
        """Treat ``value`` (in every spelling) as a secret from now on."""
        if len(value) < MIN_SECRET_LENGTH or value in self._values:
            return
        # Longest first: a secret that contains another is masked whole.
        self._values = sorted([*self._values, value], key=len, reverse=True)
        spelled = _spelled(value)
        self._sequences += spelled.sequences
        self._longest = max(self._longest, spelled.longest)
        self._first_characters |= spelled.first_characters

    def redact(self, text: str) -> str:
        """``text`` with every known secret, in any spelling, replaced by ``[redacted]``."""
        for value in self._values:
            text = _secret_pattern(value).sub(REDACTED, text)
        return text

    def partial_tail(self, text: str) -> int:
        """The earliest position from which the rest of ``text`` is the start of a secret.

        Any spelling, at least one character; only the last longest-spelling characters
        are looked at, so the cost does not grow with the text. Returns ``len(text)`` when
        the text ends with no such start.
        """
        for start in range(max(0, len(text) - self._longest), len(text)):
            if text[start] in self._first_characters and any(
                _reaches_end(text, start, sequence) for sequence in self._sequences
            ):
                return start
        return len(text)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:
        return f"Redactor({len(self._values)} secrets)"


@record(frozen=True, slots=True)
class CutText:
    """A masked text, and whether anything was cut from its end."""

    text: str
    cut: bool
    original_length: int


def masked_cut(
    redactor: Redactor, text: str, max_chars: int | None = None, *, arrived_cut: bool = False
) -> CutText:
    """``text`` masked, then cut to ``max_chars``, with any start of a secret at the cut dropped.

    ``arrived_cut``: the text was already cut before it could be masked (a response body
    read up to a byte cap), so its end is a cut too. The result never exceeds ``max_chars``
    and keeps everything before the earliest position from which the text's end could be
    the start of a secret's spelling, so no cut reveals the start of a secret it split.
    Linear in the text: masking is one regex pass, the cut looks at a bounded tail.
    """
    masked = redactor.redact(text)
    end = len(masked)
    cut = arrived_cut
    if max_chars is not None and end > max_chars:
        end, cut = max_chars, True
        # A cut inside a marker takes the whole marker: "[reda" would look like text.
        marker = masked.find(REDACTED, max(0, end - len(REDACTED) + 1))
        if marker != -1 and marker < end:
            end = marker
    kept = masked[:end]
    if cut:
        # One pass, never repeated: dropping again after the first drop would walk back
        # over a run of characters that can each start a spelling ("&&&&..."), one
        # character and one table walk at a time, and return nothing.
        kept = kept[: redactor.partial_tail(kept)]
    return CutText(kept, cut, len(masked))
