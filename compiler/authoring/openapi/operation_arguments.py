"""The argument tables one operation fills (one per section of the model's table), the
values a reviewer fixes instead of the model (the API's version in a query parameter or a
header, a header with one value), and the one rule for what §10 cannot say: left out with
a note when it is optional, the operation skipped (:class:`Unexpressible`) when it is
required."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from compiler.authoring.openapi.naming import argument_name, setting_name
from compiler.authoring.openapi.schemas import Unexpressible
from compiler.authoring.openapi.security import Credentials, Setting, is_credential_header
from compiler.authoring.openapi.sinks import header_text
from compiler.runtime.egress.headers import header_name_problem
from compiler.runtime.manifest.parameters import (
    BODY,
    FILES,
    HEADER,
    PARAMETER_SECTIONS,
    PATH,
    QUERY,
)
from compiler.runtime.placeholders import setting_placeholder

# RFC 6265's cookie-octets a value keeps as written; every other character is
# percent-encoded, and so are `$`, `{`, `}` and `%` (capc's `${...}` and the escape itself).
_COOKIE_SAFE = "-._~!#&'()*+/:<=>?@[]^`|"
_SECTION_WORDS = {PATH.key: "path", QUERY.key: "query", HEADER.key: "header",
                  BODY.key: "body", FILES.key: "file", "body_params": "body"}


@dataclass(slots=True)
class Arguments:
    """The argument tables of one operation, one per section of the model's table."""

    tables: dict[str, dict[str, Any]] = dataclasses.field(
        default_factory=lambda: {section.key: {} for section in PARAMETER_SECTIONS})

    @property
    def path_params(self) -> dict[str, Any]:
        """Path slots."""
        return self.tables[PATH.key]

    @property
    def params(self) -> dict[str, Any]:
        """Query parameters."""
        return self.tables[QUERY.key]

    @property
    def headers(self) -> dict[str, Any]:
        """Header parameters (not credentials: those are configured headers)."""
        return self.tables[HEADER.key]

    @property
    def body(self) -> dict[str, Any]:
        """Body fields."""
        return self.tables[BODY.key]

    @property
    def files(self) -> dict[str, Any]:
        """Multipart file fields."""
        return self.tables[FILES.key]

    def claim(self, name: str, where: str, required: bool, notes: list[str]) -> bool:
        """Whether ``name`` is free (§2.1: one name, one place). A name already taken is
        left out when this use of it is optional (Kubernetes' ``dryRun`` in the query and
        in a DeleteOptions body, its proxy ``path`` slot and ``?path=``), with a note;
        a required second use cannot be sent, and the operation is skipped."""
        for section in PARAMETER_SECTIONS:
            if name in self.tables[section.key]:
                taken = _SECTION_WORDS[section.key]
                if required:
                    raise Unexpressible(f"argument {name!r} is both a {taken} and a "
                                        f"{where} parameter")
                notes.append(f"optional {where} parameter {name!r} left out: the {taken} "
                             "parameter of the same name is the argument")
                return False
        return True


    def place(self, name: str, where: str, required: bool, notes: list[str]) -> str | None:
        """The argument name for ``name`` in ``where`` (query, header or body: sections
        whose arguments carry a wire name): itself when free; a required use of a name
        another section took gets a location-qualified one (Trello's path ``{token}`` and
        query ``token``: the query one is ``query_token``, the caller sends it as
        ``token``); an optional one, or one the same location took (two values under one
        wire name), is left out or skips the operation (:meth:`claim`). None: left out."""
        taken = next((_SECTION_WORDS[section.key] for section in PARAMETER_SECTIONS
                      if name in self.tables[section.key]), where)
        if not required or taken == where:  # one location has one wire name per value
            return name if self.claim(name, where, required, notes) else None
        qualified = argument_name(f"{where}_{name}")
        self.claim(qualified, where, required, notes)  # taken too: the operation is skipped
        notes.append(f"{where} parameter {name!r} is the argument {qualified!r} (the {taken} "
                     f"parameter of the same name is {name!r}); it is sent as {name!r}")
        return qualified


def drop(notes: list[str], required: bool, what: str) -> None:
    """Something SPEC §10 cannot express: a note when it is optional, else the operation
    is skipped with the reason."""
    if required:
        raise Unexpressible(f"required {what} cannot be expressed")
    notes.append(f"optional {what} left out: SPEC §10 cannot express it")


def literal(value: Any) -> str:
    """A document's constant as text: booleans as JSON writes them."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def fixed_query(credentials: Credentials, api: str, name: str, entry: dict[str, Any],
                notes: list[str]) -> None:
    """A query parameter naming the API version (``api-version``): its default (or only
    value) in the URL, else a setting the team fills, listed with the others."""
    values = entry.get("enum", ())
    fixed = entry.get("default", values[0] if len(values) == 1 else None)
    if fixed is not None:
        credentials.query.setdefault(name, literal(fixed))
        notes.append(f"query parameter {name!r} sent as {fixed!r}")
        return
    setting = Setting(setting_name(api, name), f"the value of query parameter {name!r}")
    credentials.query.setdefault(name, setting_placeholder(setting.name))
    credentials.need(setting)


def fixed_header(credentials: Credentials, api: str, name: str, entry: dict[str, Any],
                 required: bool, notes: list[str]) -> None:
    """A header naming the API version (``anthropic-version``, ``X-GitHub-Api-Version``):
    the version the team reviewed, its default, else a setting when it is required."""
    unsendable = header_text(name, literal(entry["default"])) if "default" in entry \
        else None
    if unsendable is not None:
        drop(notes, required, unsendable)
    elif "default" in entry:
        credentials.headers.setdefault(name, literal(entry["default"]))
        notes.append(f"header {name!r} sent as {entry['default']!r} (its default)")
    elif required:
        setting = Setting(setting_name(api, name), f"the value of header {name!r}")
        credentials.headers.setdefault(name, setting_placeholder(setting.name))
        credentials.need(setting)
    else:
        notes.append(f"optional header {name!r} left out: the API version is the "
                     "server's default")


def cookie_parameter(credentials: Credentials, api: str, name: str, entry: dict[str, Any],
                     required: bool, notes: list[str]) -> None:
    """A cookie parameter, sent in the one ``Cookie`` header with the others. SPEC §10 has no
    cookie arguments, so a model never chooses one: a cookie named like a credential is a
    setting; a required one with a default (or one value) is sent as that value; any other
    is left out with a note, or, when required, the operation is skipped."""
    problem = header_name_problem(name)
    if problem is not None:  # a cookie's name is a token, as a header's
        return drop(notes, required, f"cookie parameter {name[:80]!r} ({problem})")
    if is_credential_header(name):
        setting = Setting(setting_name(api, name), f"the {name} cookie")
        _add_cookie(credentials, f"{name}={setting_placeholder(setting.name)}")
        credentials.need(setting)
        return
    values = entry.get("enum", ())
    fixed = entry.get("default", values[0] if len(values) == 1 else None)
    if required and fixed is not None and entry["type"] in ("string", "integer", "number",
                                                            "boolean"):
        _add_cookie(credentials, f"{name}={quote(literal(fixed), safe=_COOKIE_SAFE)}")
        said = "default" if "default" in entry else "only value"
        notes.append(f"cookie {name!r} sent as {fixed!r} (its {said})")
        return
    drop(notes, required, f"cookie parameter {name[:80]!r} (SPEC §10 has no cookie "
                          "arguments)")


def _add_cookie(credentials: Credentials, pair: str) -> None:
    """One more ``name=value`` pair in the operation's ``Cookie`` header."""
    written = credentials.headers.get("Cookie")
    credentials.headers["Cookie"] = f"{written}; {pair}" if written else pair
