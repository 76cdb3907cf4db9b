"""The URL rules, in one place: what a URL capc sends requests to may look like.

Two callers share them. The compiler applies them to the literal text of a YAML URL
(``compiler.checks.url_rules``, a located error); the runtime applies them to a URL whose
``${...}`` settings were resolved (an MCP server URL, which a provider connects to, and an
api URL whose origin comes from a setting) before anything is built from it. Parsers
disagree on exactly the spellings refused here, so capc refuses them rather than picking
one parser's reading:

- control characters and white space anywhere (WHATWG parsers drop tabs and newlines,
  ``urlsplit`` too, others keep them);
- anything but an absolute ``http://`` or ``https://`` URL with a host;
- a backslash (``http://a.com\\@169.254.169.254``: a host for one parser, a path for another);
- user information (``https://api.example.com@evil.test``: the real host hides behind it);
- a port that is not 1-65535, and a host with percent-encoding, invisible or bidi
  characters (``evil%2Ecom``), or characters no host name has.

The host itself is then judged by :class:`EgressPolicy` in every spelling (decimal,
octal, hex, short, IPv6 forms carrying IPv4, trailing dots, full-width digits). Reasons
are safe to show a model or log: they never quote the URL, its path, query or userinfo.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from compiler.runtime.egress.addresses import EgressPolicy, Refusal
from compiler.runtime.records import record

HTTP_SCHEMES = ("http", "https")
# C0 controls, space, DEL, C1 controls: parsers strip, keep or reject them differently.
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f-\x9f]")
# Unicode categories that are invisible or white space: a reviewer cannot see them.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn"})
_PLACEHOLDER = re.compile(r"\$\{[^{}]*\}|\{[^{}]*\}")


@record(frozen=True, slots=True)
class UrlProblem:
    """Why a URL is refused. ``reason`` is safe to show; ``detail`` is the parser's text."""

    code: str
    reason: str
    detail: str = ""
    refusal: Refusal | None = None


def url_shape_problem(url: str) -> UrlProblem | None:
    """The first structural rule ``url`` breaks (see the module text), or None.

    ``url`` may still hold ``${SETTING}`` placeholders and ``{slot}``s (the compiler's
    view); they are ordinary characters here.
    """
    bad = _CONTROL_OR_SPACE.search(url) or _first_invisible(url)
    if bad is not None:
        character = bad if isinstance(bad, str) else bad.group()
        return UrlProblem("url-invalid",
                          f"the URL contains a control, invisible or white-space character "
                          f"(U+{ord(character):04X}), which URL parsers drop or keep differently")
    try:
        parts = urlsplit(url)
        port = parts.port  # a property that parses the netloc each time: read once
    except ValueError as error:
        return UrlProblem("url-invalid", "the URL is not valid (its port or IPv6 host cannot "
                          "be read)", detail=str(error))
    if parts.scheme.lower() not in HTTP_SCHEMES or not parts.netloc:
        return UrlProblem("url-not-absolute", "the URL is not an absolute http(s) URL")
    if not url[len(parts.scheme):].startswith("://"):
        return UrlProblem("url-not-absolute", "the URL is not an absolute http(s) URL")
    if "\\" in url:
        return UrlProblem("url-invalid", "a backslash in a URL is read differently by "
                          "different parsers (host confusion): remove it")
    if "@" in parts.netloc:
        return UrlProblem("url-userinfo", "user information (user@host) in a URL hides the "
                          "real host from reviewers: send credentials in a header")
    if port == 0:
        return UrlProblem("url-invalid", "the URL's port is 0, which no server listens on")
    return None


def host_spelling_problem(host: str) -> UrlProblem | None:
    """Why a literal host (as ``urlsplit`` reads it) is spelled so parsers may disagree, or None.

    Run after the address policy, which reads every IP spelling; what is left are names.
    """
    if host.startswith("[") or ":" in host:
        return None  # IPv6: the policy parses it or refuses it as malformed
    if "%" in host:
        return UrlProblem("url-invalid", "percent-encoding in a host name hides what it "
                          "names from reviewers (parsers decode it differently): write the "
                          "host plainly")
    if _first_invisible(host) is not None or _CONTROL_OR_SPACE.search(host):
        return UrlProblem("url-invalid", "the host has invisible or white-space characters")
    return None


def url_syntax_problem(url: str) -> UrlProblem | None:
    """The shape rules and the host spelling rules, without the address policy."""
    problem = url_shape_problem(url)
    if problem is not None:
        return problem
    return host_spelling_problem(written_host(url))


def url_problem(url: str, policy: EgressPolicy) -> UrlProblem | None:
    """Every rule, for a URL whose settings are resolved: shape, host under ``policy``, spelling.

    A ``{slot}`` may remain in the path or query (it is filled per call, and may never sit
    in the origin); a host that still holds a placeholder is refused.
    """
    problem = url_shape_problem(url)
    if problem is not None:
        return problem
    host = urlsplit(url).hostname or ""
    written = written_host(url)
    if not host or _PLACEHOLDER.search(written):
        return UrlProblem("url-not-absolute", "the URL has no literal host")
    refusal = policy.refusal_for_host(host)
    if refusal is not None:
        code = "url-private-address" if refusal.overridable else "url-forbidden-address"
        return UrlProblem(code, _refusal_reason(refusal), refusal=refusal)
    return host_spelling_problem(written)


def written_host(url: str) -> str:
    """The host of ``url`` as written (case and brackets kept), without userinfo and port.

    Call it on a URL :func:`url_shape_problem` accepts.
    """
    netloc = urlsplit(url).netloc.rpartition("@")[2]
    if netloc.startswith("["):
        return netloc.partition("]")[0] + "]"
    return netloc.partition(":")[0]


def _refusal_reason(refusal: Refusal) -> str:
    text = refusal.reason
    if refusal.overridable:
        text += " (private networks are not allowed)"
    return text


def _first_invisible(text: str) -> str | None:
    if text.isascii():  # the loop looks only past ASCII: one C-level test instead
        return None
    for character in text:
        if ord(character) > 0x7F and unicodedata.category(character) in _INVISIBLE_CATEGORIES:
            return character
    return None
