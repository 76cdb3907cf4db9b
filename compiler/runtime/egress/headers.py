"""Request headers no capability may set: the ones that route or frame a request.

One list, used twice: the compiler refuses these names in YAML (a located error) and the
runtime refuses them before a request is sent, whatever spelling a header name or a
resolved setting takes. They are refused because capc, not the capability, decides where
a request goes and how its body is framed:

- ``Host`` (and the names proxies and frameworks route by: ``Forwarded``,
  ``X-Forwarded-Host`` ...) would let a request reach a virtual host nobody reviewed
  through a proxy or CDN that routes by it;
- ``Content-Length``, ``Transfer-Encoding``, ``TE``, ``Trailer``, ``Expect`` frame the
  body: a second framing is how requests are smuggled through a proxy;
- ``Connection``, ``Keep-Alive``, ``Upgrade``, ``Proxy-*`` and ``HTTP2-Settings`` are
  hop-by-hop (RFC 9110 §7.6.1): they speak to the connection, which capc owns;
- ``X-HTTP-Method-Override`` and friends make a server run another method than the
  reviewed one (a read-only GET that acts as a DELETE).
"""

from __future__ import annotations

import re
import unicodedata

# Lowercase names. Compare with :func:`normalized_header_name`, never with ``name.lower()``
# alone: YAML keys and settings may carry surrounding whitespace.
FORBIDDEN_REQUEST_HEADERS: frozenset[str] = frozenset({
    # routing
    "host", "forwarded", "x-forwarded-host", "x-forwarded-server", "x-forwarded-proto",
    "x-forwarded-port", "x-forwarded-scheme", "x-forwarded-prefix", "x-forwarded-for",
    "x-host", "x-original-host", "x-original-url", "x-rewrite-url", "x-real-ip", "via",
    # framing
    "content-length", "transfer-encoding", "te", "trailer", "expect",
    # hop-by-hop (RFC 9110 §7.6.1, RFC 9113 §8.2.2)
    "connection", "keep-alive", "upgrade", "http2-settings", "proxy-connection",
    "proxy-authorization", "proxy-authenticate", "proxy-authentication-info",
    # the method the server acts on
    "x-http-method-override", "x-http-method", "x-method-override",
})
# Every name starting with one of these is refused as well (``Proxy-Foo``).
FORBIDDEN_REQUEST_HEADER_PREFIXES: tuple[str, ...] = ("proxy-",)


def normalized_header_name(name: str) -> str:
    """``name`` as compared against the forbidden list: trimmed, lowercase, look-alikes folded.

    Whitespace and a trailing colon around the name, compatibility forms (full-width
    letters, the long s of ``Hoſt``), combining marks and invisible format characters
    (zero-width space) are folded away, so no spelling of ``Host`` slips past the list.
    Such names are not HTTP tokens anyway; folding makes the refusal name the header.
    An ASCII name has nothing to fold (NFKD keeps it, and no ASCII character is a mark or
    a format character): the shortcut beside the general path, proven equal by
    tests/runtime/egress/test_header_names.py.
    """
    if name.isascii():
        return name.strip().rstrip(":").strip().lower()
    decomposed = unicodedata.normalize("NFKD", name)
    visible = "".join(
        character for character in decomposed
        if unicodedata.category(character) not in ("Mn", "Cf")
    )
    return visible.strip().rstrip(":").strip().casefold()


def is_forbidden_request_header(name: str) -> bool:
    """True when a capability may not set a request header called ``name`` (any spelling)."""
    normalized = normalized_header_name(name)
    return normalized in FORBIDDEN_REQUEST_HEADERS or normalized.startswith(
        FORBIDDEN_REQUEST_HEADER_PREFIXES
    )


def forbidden_header_problem(name: str) -> str | None:
    """Why a capability may not set header ``name`` (safe to show: names only), or None."""
    if not is_forbidden_request_header(name):
        return None
    return (
        f"header {name!r} routes or frames the request (where it goes, how its body is "
        "delimited, or the connection): capc writes such headers itself, a capability may not"
    )


# What no header name or value may hold: each would end the header (or the request) early
# and let what follows be read as another header. The one rule, for configured headers,
# settings substituted into them, header arguments and what an import writes.
HEADER_BREAKING_CHARACTERS = ("\r", "\n", "\0")


def breaks_header(text: str) -> bool:
    """Whether ``text`` holds CR, LF or NUL (see :data:`HEADER_BREAKING_CHARACTERS`)."""
    return "\r" in text or "\n" in text or "\0" in text


# RFC 9110 §5.6.2 token: header names, and media types' parts (authoring/openapi/body_media).
TOKEN_PATTERN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN = re.compile(TOKEN_PATTERN)


def header_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an HTTP header name (RFC 9110 token), or None."""
    return None if _TOKEN.fullmatch(name) else "the name is not an HTTP token"


def configured_header_problem(name: str) -> str | None:
    """Why a configured request header called ``name`` may not be sent, or None.

    The message names the header, never its value (which may hold a resolved secret).
    """
    forbidden = forbidden_header_problem(name)
    if forbidden is not None:
        return forbidden
    problem = header_name_problem(name)
    return None if problem is None else f"header {name!r} cannot be sent: {problem}"
