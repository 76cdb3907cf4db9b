"""Credentials never become model arguments: security schemes → ``${SETTING}`` placeholders.

The operation's ``security`` (else the document's) lists alternatives; the first one is
used, and each scheme of it becomes a header (or a query parameter, or a cookie) whose
value is a placeholder named after the API and the scheme, e.g. ``${STRIPE_API_BASIC_AUTH}``.
Header parameters named like credentials get the same treatment. The settings are listed
in the command's output, so the reviewer knows what to create.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.naming import setting_name
from compiler.checks.url_rules import CREDENTIAL_HEADERS
from compiler.runtime.egress.headers import header_name_problem

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
                    api: str) -> Credentials:
    """The credentials one operation needs, as placeholders (``api``: the title words)."""
    found = Credentials()
    requirements = operation.get("security", document.get("security"))
    if not isinstance(requirements, list) or not requirements:
        return found
    first = next((r for r in requirements if isinstance(r, Mapping) and r), None)
    if first is None:
        return found  # only {}: anonymous access is allowed
    if len(requirements) > 1:
        found.notes.append("the document allows other security alternatives; the first "
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
