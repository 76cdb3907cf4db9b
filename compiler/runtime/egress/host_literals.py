"""Host literals as resolvers read them: normalising a host, reading an IP address in any
spelling (decimal, octal, hex, short, bracketed IPv6 with a zone id, percent-encoded,
full-width digits), and telling whether URL parsers must read a host as an address.

:mod:`compiler.runtime.egress.addresses` classifies what these functions read.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import unquote

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Dots that IDNA (UTS #46) maps to "." before a URL parser looks for an IPv4 address.
_DOT_VARIANTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_DECIMAL = re.compile(r"[0-9]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")




def normalize_host(host: str) -> str:
    """The host as a resolver sees it: unbracketed, no zone id, decoded, lowercase, no final dot."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
        # The zone id (fe80::1%25eth0 in a URL, fe80::1%eth0 elsewhere) names an interface,
        # not part of the address.
        return text.split("%", 1)[0].lower()
    text = unquote(text)
    text = unicodedata.normalize("NFKC", text).translate(_DOT_VARIANTS).lower()
    if ":" in text:
        return text.split("%", 1)[0]
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    return text


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host literal denotes in any spelling resolvers accept; None for a name."""
    return address_of(normalize_host(host))


def address_of(text: str) -> IPAddress | None:
    """:func:`parse_ip_literal` of an already normalised host (normalising is not
    idempotent: a second pass would decode ``%25`` again)."""
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text)
        except ValueError:
            return None
    return _parse_ipv4(text)


def _parse_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in inet_aton's spellings (WHATWG URL rules); None otherwise."""
    # inet_aton and WHATWG URL rules: 1-4 parts, each decimal, octal (leading 0) or hex
    # (0x); the last part fills all remaining bytes, so "127.1" is 127.0.0.1.
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _parse_ipv4_part(part)
        if value is None:
            return None
        values.append(value)
    *leading, last = values
    if any(value > 255 for value in leading) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(leading):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _parse_ipv4_part(part: str) -> int | None:
    if _HEX.fullmatch(part):
        return int(part[2:] or "0", 16)
    if not _DECIMAL.fullmatch(part):
        return None
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8) if set(part) <= set("01234567") else None
    return int(part)


def looks_like_ip_literal(host: str) -> bool:
    """True when URL parsers must read the host as an IP: it has a colon or a numeric last label."""
    return reads_as_address(normalize_host(host))


def reads_as_address(text: str) -> bool:
    """:func:`looks_like_ip_literal` of an already normalised host."""
    if ":" in text:
        return True
    last_label = text.rsplit(".", 1)[-1]
    return bool(_DECIMAL.fullmatch(last_label) or _HEX.fullmatch(last_label))
