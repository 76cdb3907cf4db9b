"""Literal credentials in imported rows become ``${NAME}`` settings.

A capabilities table often holds the key itself (``Authorization: Bearer sk-…``,
``?appid=<hex>``). ``capc import`` never writes such a value: the header or query value
becomes a placeholder named after the capability and the header or parameter, and the
import lists the settings to create. What counts as a literal credential is the compile
check's own rule (:mod:`compiler.checks.url_rules`), so what is lifted here is exactly what
``capc compile`` would otherwise refuse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from compiler.checks.url_rules import (
    header_holds_literal_credential,
    query_holds_literal_credential,
)

_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
_AUTH_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*)( +)\S")
# The option holding each type's URL.
URL_OPTION = {"api": "url", "mcp": "server_url"}


@dataclass(frozen=True, slots=True)
class LiftedSecret:
    """A setting ``capc import`` introduced for a credential it removed from a row."""

    setting: str
    code: str
    where: str  # "header Authorization", "query parameter appid"


def setting_name(code: str, key: str) -> str:
    """``get_weather`` + ``X-Api-Key`` → ``GET_WEATHER_X_API_KEY`` (a valid ``${NAME}``)."""
    return _NOT_NAME.sub("_", f"{code}_{key}").strip("_").upper()


def lift_secrets(code: str, kind: str, options: Mapping[str, Any]
                 ) -> tuple[dict[str, Any], tuple[LiftedSecret, ...]]:
    """``options`` with every literal credential in headers and the URL's query replaced
    by a placeholder, and the settings those placeholders name."""
    lifted: list[LiftedSecret] = []
    taken: set[str] = set()

    def new_setting(key: str, where: str) -> str:
        name = base = setting_name(code, key)
        number = 2
        while name in taken:  # two keys that differ only in punctuation
            name, number = f"{base}_{number}", number + 1
        taken.add(name)
        lifted.append(LiftedSecret(name, code, where))
        return name

    result = dict(options)
    headers = options.get("headers")
    if isinstance(headers, Mapping):
        rewritten: dict[str, Any] = {}
        for name, value in headers.items():
            if isinstance(name, str) and isinstance(value, str) \
                    and header_holds_literal_credential(name, value):
                value = _keep_scheme(value, new_setting(name, f"header {name}"))
            rewritten[name] = value
        result["headers"] = rewritten
    url_key = URL_OPTION.get(kind)
    url = options.get(url_key) if url_key else None
    if url_key and isinstance(url, str) and "?" in url:
        result[url_key] = _lift_query(url, new_setting)
    return result, tuple(lifted)


def _keep_scheme(value: str, setting: str) -> str:
    """``Bearer sk-…`` → ``Bearer ${SETTING}``: the scheme is not the secret."""
    scheme = _AUTH_SCHEME.match(value)
    if scheme is None:
        return f"${{{setting}}}"
    return f"{scheme.group(1)}{scheme.group(2)}${{{setting}}}"


def _lift_query(url: str, new_setting: Any) -> str:
    """``url`` with each credential-carrying query value replaced, the rest byte for byte."""
    base, _, rest = url.partition("?")
    query, hash_mark, fragment = rest.partition("#")
    pieces = []
    for piece in query.split("&"):
        name, equals, raw = piece.partition("=")
        key = unquote_plus(name)
        if equals and query_holds_literal_credential(key, unquote_plus(raw)):
            piece = f"{name}=${{{new_setting(key, f'query parameter {key}')}}}"
        pieces.append(piece)
    return f"{base}?{'&'.join(pieces)}{hash_mark}{fragment}"
