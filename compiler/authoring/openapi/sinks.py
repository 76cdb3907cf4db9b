"""Document text on its way into a place capc interpolates: escaped, or refused.

A generated api capability is interpolated at run time in its URL (``${SETTING}`` and
``{slot}``) and its header values (``${SETTING}``); a ``${NAME}`` the *document* wrote there
would make the tool send that setting (``${OPENAI_API_KEY}``) to the document's host. So:

- text the document puts into the URL (server URL and its variables' defaults, fixed query
  names and values) has ``$``, ``{`` and ``}`` percent-encoded: the URL means the same to
  the server and holds no placeholder or slot for capc (:func:`url_text`,
  :func:`escaped_server_url`); the host part cannot be encoded and is refused instead;
- a header carries document text only when it holds no ``${`` and its name is an HTTP
  token (:func:`header_text`); a header that cannot is not sent (optional) or its
  operation is skipped with the reason (required);
- whatever else comes to hold a ``${`` later, :func:`refuse_foreign_placeholders` is the
  last gate: an operation whose URL or headers hold a placeholder the import did not
  create itself is skipped, so the settings listed are exactly the settings the tools use.

The grammar is the runtime's own (:mod:`compiler.runtime.placeholders`), and
:func:`interpolated_settings` is the scan the compiler records as a tool's placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from compiler.runtime.egress.headers import breaks_header, header_name_problem
from compiler.runtime.placeholders import SETTING_PATTERN, placeholders_in

# What a query name or value from the document keeps as written: RFC 3986 unreserved.
# Everything else (``$``, braces, ``&``, ``=``, ``#``...) is percent-encoded, so a document
# value can neither start a placeholder or slot nor add a query parameter of its own.
_QUERY_SAFE = "-._~"
# The characters interpolation reads in a URL; a server URL keeps every other character.
_INTERPOLATED = {"$": "%24", "{": "%7B", "}": "%7D"}
# What a host part may not hold: a placeholder or slot, credentials, an escape, a space.
_NOT_IN_HOST = re.compile(r"[${}@%\\\s]")
# Where an api capability interpolates settings (compiler.normalize records the same parts).
INTERPOLATED_OPTIONS = ("url", "headers", "body_template")


class SinkRefused(ValueError):
    """Document text that cannot be made safe where it would go; the message says why."""


def url_text(text: str) -> str:
    """A query name or value from the document, percent-encoded (no placeholder, no slot,
    no query syntax of its own)."""
    return quote(text, safe=_QUERY_SAFE)


def escaped_server_url(url: str) -> str:
    """A server URL the document wrote (variables filled), with ``$``/``{``/``}`` of its
    path, query and fragment percent-encoded; SinkRefused when its host holds any."""
    parts = urlsplit(url)
    if not parts.netloc or _NOT_IN_HOST.search(parts.netloc):
        raise SinkRefused(f"its host part {parts.netloc!r} holds characters a host name "
                          "cannot (a placeholder, a slot or credentials)")
    start = len(parts.scheme) + 3 + len(parts.netloc)
    rest = url[start:]
    for character, escape in _INTERPOLATED.items():
        rest = rest.replace(character, escape)
    return url[:start] + rest


def header_text(name: str, value: str) -> str | None:
    """Why a header the document names cannot be sent as written (None when it can)."""
    if header_name_problem(name) is not None:
        return f"header {name!r} (not an HTTP token)"
    if "${" in value or breaks_header(value):
        return f"header {name!r} (its value holds '${{', which capc interpolates, or a line break)"
    return None


def settings_to_create(tools: Iterable[Any]) -> list[tuple[str, str]]:
    """``(NAME, meaning)`` of every setting the generated tools resolve, sorted: read from
    the files' data (what runs), with the meaning the import recorded where it made one."""
    listed: set[tuple[str, str]] = set()
    for tool in tools:
        meanings = {setting.name: setting.meaning for setting in tool.settings}
        for name in interpolated_settings(tool.data.get("options") or {}):
            listed.add((name, meanings.get(name, "used by the generated file")))
    return sorted(listed)


def interpolated_settings(options: Mapping[str, Any]) -> list[str]:
    """The settings a capability's options make its tool resolve (sorted)."""
    return placeholders_in([options.get(part) for part in INTERPOLATED_OPTIONS])


def refuse_foreign_placeholders(options: Mapping[str, Any], created: Iterable[str]) -> None:
    """SinkRefused when the interpolated options hold a ``${`` the import did not write.

    ``created``: the settings the import introduced (security schemes, credential
    headers). Any other ``${``, well-formed or not, came from the document.
    """
    made = set(created)
    for part in INTERPOLATED_OPTIONS:
        for text in _texts(options.get(part)):
            if "${" not in text:
                continue
            rest = SETTING_PATTERN.sub(lambda m: "" if m.group(1) in made else m.group(), text)
            if "${" in rest:
                foreign = sorted(set(SETTING_PATTERN.findall(rest)) - made)
                named = f" (${{{foreign[0]}}})" if foreign else ""
                raise SinkRefused(f"the document puts a placeholder{named} into the tool's "
                                  f"{part}: capc would send that setting to the API")


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)
