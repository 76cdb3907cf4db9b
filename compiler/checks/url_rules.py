"""Static checks of where requests go and what they carry: URLs, hosts, credentials.

The address table is the runtime's (``compiler.runtime.egress.addresses``): one policy, two
callers. Here it sees only literal hosts; hosts that come from settings are checked by
the runtime transport against the address it actually connects to.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from compiler.checks.interpolation import iter_strings, malformed_placeholders
from compiler.checks.parameter_rules import WalkedParameter, walked_parameters
from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.runtime.egress.addresses import EgressPolicy, IPNetwork, Refusal
from compiler.runtime.egress.headers import breaks_header, forbidden_header_problem
from compiler.runtime.egress.urls import (
    UrlProblem,
    host_spelling_problem,
    url_shape_problem,
    written_host,
)
from compiler.runtime.placeholders import SETTING_PATTERN as PLACEHOLDER_PATTERN
from compiler.runtime.records import record
from compiler.source.documents import SourceDocument

HEADER_FORBIDDEN = Code(
    "header-forbidden", "a header capc sets itself (or a hop-by-hop header) is written")
HEADER_VALUE = Code("header-value", "a header value contains CR, LF or NUL")
INVALID_PLACEHOLDER = Code("invalid-placeholder", "a ${...} placeholder is malformed")
LITERAL_CREDENTIAL = Code(
    "literal-credential", "a credential is written literally instead of as a ${SETTING}")
PLAIN_HTTP_SECRET = Code(
    "plain-http-secret", "settings would be sent over plain http", Severity.WARNING)
URL_FORBIDDEN_ADDRESS = Code("url-forbidden-address", "a URL points at a forbidden address")
URL_INVALID = Code("url-invalid", "a URL cannot be read the same way by every parser")
URL_NOT_ABSOLUTE = Code("url-not-absolute", "a URL is not absolute http(s)")
URL_PRIVATE_ADDRESS = Code("url-private-address", "a URL points at a private address")
URL_USERINFO = Code("url-userinfo", "a URL holds user:password@")
CODES = (
    HEADER_FORBIDDEN, HEADER_VALUE, INVALID_PLACEHOLDER, LITERAL_CREDENTIAL, PLAIN_HTTP_SECRET,
    URL_FORBIDDEN_ADDRESS, URL_INVALID, URL_NOT_ABSOLUTE, URL_PRIVATE_ADDRESS, URL_USERINFO,
)
# The runtime's URL rules name their codes as text (the runtime imports nothing from here).
RUNTIME_URL_CODES = {code.id: code for code in (URL_INVALID, URL_NOT_ABSOLUTE, URL_USERINFO)}

CREDENTIAL_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "apikey",
    "x-auth-token", "x-access-token", "private-token", "x-goog-api-key",
    "ocp-apim-subscription-key",
})
_SECRET_NAME = re.compile(r"(?i)(?:^|[-_])(?:key|apikey|api_key|token|secret|password|passwd|pwd|"
                          r"signature|sig|auth|credential|session|appid|app_id)s?$")
# Shapes of well-known secrets, so a pasted key is caught wherever it is written.
SECRET_VALUE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
)


def check_placeholders(
    document: SourceDocument, path: tuple[str | int, ...], text: str
) -> list[Diagnostic]:
    """Every malformed ``${...}`` in one configuration string."""
    return [
        Diagnostic.error(document.location(path), INVALID_PLACEHOLDER,
                         f"malformed placeholder {bad!r}: write ${{NAME}} with NAME of letters, "
                         "digits and underscores, not starting with a digit")
        for bad in malformed_placeholders(text)
    ]


@record(slots=True)
class RepeatedAnswers:
    """The answers of the rules that read one literal host, or one header's name and value,
    kept for one run of the checks over a tree: a tree names the same few hosts and headers
    (``Accept``, ``Authorization: Bearer ${TOKEN}``) in every file.

    It belongs to the run that makes it (``check_api_documents``), never to the module, so
    nothing outlives a compile. Bounded: hosts of DNS length, header pairs of a bounded
    size, a bounded count; only clean header pairs are kept, so no refused credential stays
    in memory. Proven equal to checking each file on its own by
    tests/checks/test_repeated_answers.py::test_a_run_finds_what_each_file_alone_finds.
    """

    networks: tuple[IPNetwork, ...]
    hosts: dict[str, Refusal | None] = field(default_factory=dict)
    clean_headers: set[tuple[str, str]] = field(default_factory=set)

    def host_refusal(self, host: str, networks: tuple[IPNetwork, ...]) -> Refusal | None:
        """``_host_refusal``, remembered for this run's networks."""
        if networks != self.networks or len(host) > _MAX_REMEMBERED_HOST:
            return _host_refusal(host, networks)
        if host not in self.hosts:
            if len(self.hosts) >= _MAX_REMEMBERED:
                self.hosts.clear()
            self.hosts[host] = _host_refusal(host, networks)
        return self.hosts[host]

    def remember_clean_header(self, name: str, value: str) -> None:
        """Note that ``name: value`` passed every rule of :func:`check_headers`."""
        if len(name) + len(value) > _MAX_REMEMBERED_TEXT:
            return
        if len(self.clean_headers) >= _MAX_REMEMBERED:
            self.clean_headers.clear()
        self.clean_headers.add((name, value))


_MAX_REMEMBERED = 4096
_MAX_REMEMBERED_HOST = 255  # a DNS name's bound: a long hostile host is judged each time
_MAX_REMEMBERED_TEXT = 1024


def check_url(
    document: SourceDocument, path: tuple[str | int, ...], url: str, allow_private: bool,
    policy: EgressPolicy | None = None, answers: RepeatedAnswers | None = None,
) -> list[Diagnostic]:
    """Scheme, absoluteness, literal host against the address policy, credentials in it.

    A literal host inside ``policy``'s allowed networks passes silently, strict or not.
    ``answers``: the run's remembered host answers (see :class:`RepeatedAnswers`).
    A plain URL (``_PLAIN_URL``) whose host passes skips the rules. Proven equal by
    tests/checks/test_url_fast_path.py::test_shortcut_finds_what_the_full_rules_find.
    """
    networks = policy.allowed_networks if policy else ()
    found = check_placeholders(document, path, url)
    if url.startswith("${"):
        return found  # the whole origin is a setting: the runtime checks it
    plain = _PLAIN_URL.fullmatch(url)
    if plain is not None:
        host = plain.group(1).lower()
        refusal = (_host_refusal(host, networks) if answers is None
                   else answers.host_refusal(host, networks))
        if refusal is None:
            return found  # see _PLAIN_URL: the rules below would find nothing either
    return found + _url_findings(document, path, url, allow_private, networks)


# Most URLs of a tree: http(s), a host of ASCII letters, digits, dots and hyphens (no port,
# userinfo, brackets or placeholder), then at most a path of printable ASCII without a
# backslash, "?" or "#". For such a URL every rule of _url_findings but the host's
# address is known to pass: no control, white-space or non-ASCII character, so
# url_shape_problem finds nothing (urlsplit reads netloc = the host, port None); no
# password; the host is one literal host (no "$" or "{"), written as urlsplit reads it
# (lowercased), and host_spelling_problem refuses none of its characters; no query to
# hold a credential. So when the address policy does not refuse the host, nothing is
# found; otherwise the full rules run (tests/checks/test_url_fast_path.py compares both).
# (The path's class is printable ASCII but "#", "?" and "\" written as ranges: the negated
# class over all of Unicode took 2 ms to compile at every start.)
_PLAIN_URL = re.compile(r"https?://([A-Za-z0-9.-]+)(?:/[\x21\x22\x24-\x3e\x40-\x5b\x5d-\x7e]*)?")


def _host_refusal(host: str, networks: tuple[IPNetwork, ...]) -> Refusal | None:
    """The address policy's answer for a literal host (the --allow-private-networks flag
    is applied to it later)."""
    return EgressPolicy(allowed_networks=networks).refusal_for_host(host)


def _url_findings(document: SourceDocument, path: tuple[str | int, ...], url: str,
                  allow_private: bool, networks: tuple[IPNetwork, ...]) -> list[Diagnostic]:
    """Every rule of :func:`check_url` but the placeholders, for a URL not starting with
    a setting."""
    found: list[Diagnostic] = []

    def at() -> Location:  # looked up for a finding only: most URLs have none
        return document.location(path)

    # The runtime's URL rules (one routine, also run on URLs built from settings at boot).
    shape = url_shape_problem(url)
    if shape is not None and shape.code != URL_USERINFO.id:
        return [*found, Diagnostic.error(at(), RUNTIME_URL_CODES[shape.code],
                                             _shape_message(url, shape))]
    parts = urlsplit(url)
    hostname = parts.hostname
    if parts.password and not PLACEHOLDER_PATTERN.search(parts.password):
        found.append(Diagnostic.error(at(), LITERAL_CREDENTIAL,
                                      "a password is written in the URL: use a ${SETTING} "
                                      "placeholder in a header instead"))
    elif shape is not None:
        found.append(Diagnostic.error(at(), RUNTIME_URL_CODES[shape.code], shape.reason))
    # Each literal host is judged once; the spelling check reuses the whole host's answer.
    judged = {literal: _host_refusal(literal, networks)
              for literal in _literal_hosts(hostname or "")}
    found += _check_host_spelling(at, url, hostname, {} if networks else judged)
    found += _check_query_secrets(document, path, parts.query)
    for literal, refusal in judged.items():
        if refusal is not None:
            written = parts.netloc.rpartition("@")[2]  # as written: ${NAME} keeps its case
            shown = repr(literal) if literal == hostname else (
                f"{literal!r} (the literal part of host {written!r}: a setting next to "
                "it cannot make it another host)")
            found += _address_refusal(at(), shown, refusal, allow_private)
            break
    return found


_INTERPOLATION = re.compile(r"\$?\{[^{}]*\}?|\$")


def _literal_hosts(hostname: str) -> list[str]:
    """The literal hosts to check: the whole host, or, when a placeholder or slot sits in
    it, the literal text before the first and after the last one (dots trimmed).

    ``169.254.169.254${S}`` is the metadata address whatever the setting appends (an
    empty value, or ``.nip.io``, which resolves back to it): a literal address at either
    end of a host is judged as if it were the whole host.
    """
    if not _INTERPOLATION.search(hostname):
        return [hostname] if hostname else []
    pieces = _INTERPOLATION.split(hostname)
    ends = {pieces[0].strip("."), pieces[-1].strip(".")}
    return sorted(end for end in ends if end)


def _address_refusal(at: Location, shown: str, refusal: Refusal, allow_private: bool
                     ) -> list[Diagnostic]:
    """The diagnostic for a refused literal host: a warning when the flag lets it through.

    The warning does not call the host allowed: under --strict it fails, and the way to
    accept it there is to name its range in allowed_networks.
    """
    if refusal.overridable and allow_private:
        return [Diagnostic.warning(
            at, URL_PRIVATE_ADDRESS,
            f"requests go to {shown}: {refusal.reason}; --allow-private-networks lets it "
            "through with this warning (an error under --strict): to allow it under "
            "--strict, add its range to [tool.capc] allowed_networks (or --allow-network CIDR)")]
    # The narrow door first: one range in allowed_networks, not every private address.
    hint = ("; to allow it, add its range to [tool.capc] allowed_networks (or "
            "--allow-network CIDR), or allow every private address with "
            "--allow-private-networks" if refusal.overridable else "; this is never allowed")
    code = URL_PRIVATE_ADDRESS if refusal.overridable else URL_FORBIDDEN_ADDRESS
    return [Diagnostic.error(at, code, f"requests may not go to {shown}: {refusal.reason}{hint}")]


def _check_query_secrets(
    document: SourceDocument, path: tuple[str | int, ...], query: str
) -> list[Diagnostic]:
    found = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if query_holds_literal_credential(name, value):
            found.append(Diagnostic.error(document.location(path), LITERAL_CREDENTIAL,
                                          f"query parameter {name!r} carries a literal "
                                          "credential: use a ${SETTING} placeholder"))
    return found


def check_headers(
    document: SourceDocument, path: tuple[str | int, ...], headers: dict[str, Any],
    answers: RepeatedAnswers | None = None,
) -> list[Diagnostic]:
    """Placeholders, control characters and literal credentials in configured headers
    (``answers``: the run's clean pairs, see :class:`RepeatedAnswers`)."""
    found: list[Diagnostic] = []
    for name, value in headers.items():
        if answers is not None and type(value) is str and (name, value) in answers.clean_headers:
            continue  # the same pair passed every rule below in another file
        value_path = (*path, name)
        before = len(found)
        forbidden = forbidden_header_problem(name)  # the runtime's list and wording
        if forbidden is not None:
            found.append(Diagnostic.error(document.location(value_path, key=True),
                                          HEADER_FORBIDDEN, forbidden))
            continue
        found += check_placeholders(document, value_path, value)
        if breaks_header(value):
            found.append(Diagnostic.error(document.location(value_path), HEADER_VALUE,
                                          f"header {name!r} contains CR, LF or NUL"))
        if header_holds_literal_credential(name, value):
            found.append(Diagnostic.error(
                document.location(value_path), LITERAL_CREDENTIAL,
                f"header {name!r} holds a literal credential; write it as a placeholder, "
                f"e.g. {placeholder_example(name, value)}, and store the value in settings"))
        if answers is not None and len(found) == before and type(value) is str:
            answers.remember_clean_header(name, value)
    return found


def header_holds_literal_credential(name: str, value: str) -> bool:
    """True when header ``name: value`` carries a credential written in the clear (the
    rule of the compile check, shared with ``capc import``, which lifts it into a setting)."""
    if "${" in value:  # a placeholder, well-formed or reported as malformed
        return False
    lowered = name.lower()
    return bool(lowered in CREDENTIAL_HEADERS or _SECRET_NAME.search(lowered)
                or SECRET_VALUE.search(value))


def query_holds_literal_credential(name: str, value: str) -> bool:
    """True when query parameter ``name=value`` carries a credential written in the clear."""
    literal = bool(value) and not PLACEHOLDER_PATTERN.search(value) and "{" not in value
    return literal and bool(_SECRET_NAME.search(name) or SECRET_VALUE.search(value))


_AUTH_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*) +\S")


def placeholder_example(name: str, value: str) -> str:
    """How ``name: value`` reads with the secret in a setting, keeping the auth scheme."""
    scheme = _AUTH_SCHEME.match(value)
    if scheme is None:
        return f"{name}: ${{MY_API_KEY}}"
    word = scheme.group(1)
    setting = "MY_BASIC_AUTH" if word.lower() == "basic" else "MY_API_TOKEN"
    return f'{name}: "{word} ${{{setting}}}"'


def check_body_template_secrets(
    document: SourceDocument, options: dict[str, Any],
    walked: tuple[WalkedParameter, ...] | None = None,
) -> list[Diagnostic]:
    """Credentials pasted into a body template or a parameter default (``walked``: the
    parameters, when the caller has walked them already)."""
    found = []
    candidates = list(iter_strings(options.get("body_template"), ("options", "body_template")))
    for _, nodes in walked_parameters(options) if walked is None else walked:
        for node in nodes:
            default = node.spec.get("default")
            if default is None:
                continue  # most entries have none: no generator for them
            if type(default) is str:  # the usual default: its path only for a finding
                if SECRET_VALUE.search(default):
                    candidates.append(((*node.path, "default"), default))
            else:
                candidates += iter_strings(default, (*node.path, "default"))
    for path, text in candidates:
        if SECRET_VALUE.search(text):
            found.append(Diagnostic.error(document.location(path), LITERAL_CREDENTIAL,
                                          "this value looks like a credential written in the "
                                          "clear: use a ${SETTING} placeholder"))
    return found


def check_plain_http_secrets(
    document: SourceDocument, path: tuple[str | int, ...], url: str, headers: dict[str, Any]
) -> list[Diagnostic]:
    """A warning when settings (credentials) would travel over plain http."""
    if not url.lower().startswith("http://"):
        return []
    carriers = [name for name, value in headers.items() if PLACEHOLDER_PATTERN.search(value)]
    if PLACEHOLDER_PATTERN.search(url):
        carriers.append("the URL")
    if not carriers:
        return []
    return [Diagnostic.warning(document.location(path), PLAIN_HTTP_SECRET,
                               f"settings in {', '.join(carriers)} would be sent over plain "
                               "http, readable on the network: use https")]


def _shape_message(url: str, problem: UrlProblem) -> str:
    """The located message of a URL shape problem: the compiler may quote the YAML text."""
    if problem.code == URL_NOT_ABSOLUTE.id:
        return f"{url!r} is not an absolute http(s) URL"
    if problem.detail:
        return f"invalid URL: {problem.detail}"
    return problem.reason


def _check_host_spelling(at: Callable[[], Location], url: str, hostname: str | None,
                         judged: Mapping[str, Refusal | None]) -> list[Diagnostic]:
    """A literal host name spelled so parsers may disagree (percent-encoded, invisible).

    Hosts the address policy refuses are reported by the policy check, in its words.
    ``judged``: hosts already judged under the default policy (no network allowed).
    """
    written = written_host(url)
    if not hostname or "$" in written or "{" in written:
        return []
    refusal = judged[hostname] if hostname in judged else \
        EgressPolicy(allow_private_networks=False).refusal_for_host(hostname)
    if refusal is not None:
        return []
    problem = host_spelling_problem(written)
    return [] if problem is None else [Diagnostic.error(at(), RUNTIME_URL_CODES[problem.code],
                                                            problem.reason)]
