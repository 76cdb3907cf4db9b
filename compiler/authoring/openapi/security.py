"""Credentials never become model arguments: security schemes → ``${SETTING}`` placeholders.

The operation's ``security`` (else the document's) lists alternatives; the first one is
used (with ``--security NAME``, the first made only of the chosen schemes), and each scheme
of it becomes a header (or a query parameter, or a cookie) whose
value is a placeholder named after the API and the scheme, e.g. ``${STRIPE_API_BASIC_AUTH}``.
Header parameters named like credentials get the same treatment. The settings are listed
in the command's output, so the reviewer knows what to create. ``--security`` is recorded in
each generated file's header (``# Imported with --security NAME``) and reused by ``--check``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.document_text import header_record, header_records
from compiler.authoring.openapi.naming import setting_name
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.schemas import Unexpressible
from compiler.checks.url_rules import CREDENTIAL_HEADERS
from compiler.diagnostics import Code, Diagnostic, Location
from compiler.errors import ExitCode
from compiler.report.escape import escape_control
from compiler.runtime.egress.headers import header_name_problem

OPENAPI_SECURITY = Code("openapi-security", "--security names no scheme of the document, or "
                        "the generated files record different choices")
CODES = (OPENAPI_SECURITY,)

_SECRET_WORD = re.compile(r"(?i)(?:^|[-_])(?:key|apikey|api_key|token|secret|password|auth|"
                          r"credential|session|signature)s?$")


@dataclass(frozen=True, slots=True)
class Setting:
    """A setting the team must create before the tools work, and what goes in it."""

    name: str
    meaning: str


@dataclass(slots=True)
class Credentials:
    """What one operation sends on its own: fixed headers and query parameters."""

    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    settings: list[Setting] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add_header(self, name: str, value: str, setting: Setting) -> None:
        """Send ``name: value`` (``value`` holding the setting's placeholder)."""
        if name in self.headers:  # two schemes on one header: the first stays
            return
        self.headers[name] = value
        self.need(setting)

    def need(self, setting: Setting) -> None:
        """Record that ``setting`` must exist."""
        if setting not in self.settings:
            self.settings.append(setting)


def is_credential_header(name: str) -> bool:
    """Whether a header parameter is a credential the model must never be asked for."""
    lowered = name.lower()
    return lowered in CREDENTIAL_HEADERS or bool(_SECRET_WORD.search(lowered))


def credentials_for(document: Mapping[str, Any], operation: Mapping[str, Any],
                    api: str, chosen: tuple[str, ...] = ()) -> Credentials:
    """The credentials one operation needs, as placeholders (``api``: the title words).

    ``chosen`` (``--security``): the alternative used is the first made only of these
    schemes; an operation that requires none of them is :class:`Unexpressible` (skipped,
    with the alternatives it accepts).
    """
    found = Credentials()
    requirements = operation.get("security", document.get("security"))
    if not isinstance(requirements, list) or not requirements:
        return found
    alternatives = [r for r in requirements if isinstance(r, Mapping)]
    first = _chosen_alternative(alternatives, chosen) if chosen else next(
        (r for r in alternatives if r), None)
    if first is None:
        return found  # only {}: anonymous access is allowed
    if len(requirements) > 1:
        found.notes.append(f"the document allows other security alternatives; "
                           f"{'the chosen' if chosen else 'the first'} "
                           f"({', '.join(map(str, first))}) is used")
    components = document.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, Mapping) else None
    schemes = schemes if isinstance(schemes, Mapping) else {}
    for scheme_name in first:
        scheme = schemes.get(scheme_name)
        if not isinstance(scheme, Mapping):
            found.notes.append(f"security scheme {scheme_name!r} is not defined; not sent")
            continue
        _apply(found, str(scheme_name), scheme, api)
    return found


def _chosen_alternative(alternatives: list[Mapping[str, Any]], chosen: tuple[str, ...]
                        ) -> Mapping[str, Any] | None:
    """The first alternative made only of ``chosen`` schemes (anonymous ``{}`` when no
    other fits; None: send nothing); no fit at all is Unexpressible."""
    fits = [r for r in alternatives if set(map(str, r)) <= set(chosen)]
    named = next((r for r in fits if r), None)
    if named is not None or fits:
        return named
    accepted = " or ".join("+".join(map(str, r)) for r in alternatives[:5] if r)
    raise Unexpressible(f"its security ({escape_control(accepted[:200])}) uses none of "
                        f"--security {', '.join(chosen)}")


# A --security NAME a header comment can hold (and a shell user can type).
MAX_SCHEME_CHARS = 200
SECURITY_RECORD = "# Imported with --security "
_RECORD_SUFFIX = " (reused by --check)."
_RECORD_AFTER = "# Re-importing regenerates this file"
_MAX_LISTED = 30


def scheme_names(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the document's ``components.securitySchemes``, in its order."""
    components = document.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, Mapping) else None
    return tuple(map(str, schemes)) if isinstance(schemes, Mapping) else ()


def checked_security(document: Mapping[str, Any], names: tuple[str, ...]
                     ) -> tuple[str, ...]:
    """``--security`` names (given or recorded), sorted; a name the document does not
    define is a usage refusal listing the schemes it does define."""
    known = scheme_names(document)
    for name in names:
        if name in known and name.isprintable() and len(name) <= MAX_SCHEME_CHARS:
            continue
        listed = ", ".join(escape_control(n[:80]) for n in known[:_MAX_LISTED])
        more = f" and {len(known) - _MAX_LISTED} more" if len(known) > _MAX_LISTED else ""
        shown = escape_control(name[:MAX_SCHEME_CHARS])
        message = (f"no security scheme {shown!r} in the document; its schemes: "
                   f"{listed}{more}" if known else
                   f"no security scheme {shown!r}: the document defines none "
                   "(components.securitySchemes)")
        if name in known:
            message = f"security scheme {shown!r} has a name --security cannot record"
        raise ImportRefused((Diagnostic.error(Location("--security"), OPENAPI_SECURITY,
                                              message),), ExitCode.USAGE)
    return tuple(sorted(set(names)))


def with_recorded_security(text: str, names: tuple[str, ...]) -> str:
    """A generated file's ``text`` with each ``--security`` name recorded in its header."""
    if not names:
        return text
    start = text.find(_RECORD_AFTER)
    end = text.find("\n", start) + 1 if start >= 0 else 0
    lines = "".join(header_record(SECURITY_RECORD, name, _RECORD_SUFFIX) for name in names)
    return text[:end] + lines + text[end:]


def recorded_security(texts: Mapping[str, str]) -> tuple[str, ...]:
    """The ``--security`` names generated files record (texts by path); files that record
    different ones are refused: pass ``--security`` to say which."""
    found: dict[tuple[str, ...], str] = {}
    for path, text in sorted(texts.items()):
        names = header_records(text, SECURITY_RECORD, _RECORD_SUFFIX)
        found.setdefault(tuple(sorted(names)), path)
    if len(found) > 1:
        shown = "; ".join(f"{', '.join(map(escape_control, k)) or 'none'} ({path})"
                          for k, path in sorted(found.items())[:3])
        raise ImportRefused((Diagnostic.error(
            Location(sorted(found.values())[0]), OPENAPI_SECURITY,
            f"the generated files record different --security choices: {shown}; pass "
            "--security NAME"),), ExitCode.USAGE)
    return next(iter(found), ())


def _apply(found: Credentials, scheme_name: str, scheme: Mapping[str, Any], api: str) -> None:
    kind = str(scheme.get("type", "")).lower()
    name = setting_name(api, scheme_name)
    if kind == "apikey":
        where, field_name = scheme.get("in"), scheme.get("name")
        if not isinstance(field_name, str) or not field_name:
            found.notes.append(f"security scheme {scheme_name!r} has no name; not sent")
            return
        setting = Setting(name, f"the API key ({scheme_name}: {where} {field_name!r})")
        if where == "header" and header_name_problem(field_name) is None:
            found.add_header(field_name, f"${{{name}}}", setting)
        elif where == "query":
            found.query.setdefault(field_name, f"${{{name}}}")
            found.need(setting)
        elif where == "cookie" and header_name_problem(field_name) is None:
            found.add_header("Cookie", f"{field_name}=${{{name}}}", setting)
        elif where in ("header", "cookie"):
            found.notes.append(f"security scheme {scheme_name!r}: {where} name "
                               f"{field_name!r} is not an HTTP token; add it by hand")
        else:
            found.notes.append(f"security scheme {scheme_name!r}: apiKey in {where!r} "
                               "cannot be sent; add it by hand")
        return
    if kind == "http" and str(scheme.get("scheme", "")).lower() == "basic":
        found.add_header("Authorization", f"Basic ${{{name}}}",
                         Setting(name, "base64 of USER:PASSWORD (HTTP basic)"))
    elif kind in ("http", "oauth2", "openidconnect"):
        found.add_header("Authorization", f"Bearer ${{{name}}}",
                         Setting(name, f"a bearer token ({scheme_name}, {kind})"))
    else:
        found.notes.append(f"security scheme {scheme_name!r} of type {kind!r} is not "
                           "supported; add its credentials by hand")


def credential_header(found: Credentials, api: str, header: str) -> None:
    """A header parameter named like a credential: a setting, never an argument."""
    name = setting_name(api, header)
    found.add_header(header, f"${{{name}}}", Setting(name, f"the {header} header"))


def security_lines(security: tuple[str, ...]) -> tuple[str, ...]:
    """What the import's summary says of ``--security``."""
    if not security:
        return ()
    return (f"security: {', '.join(security)} (--security, recorded in the files: --check "
            "needs no flag)",)
