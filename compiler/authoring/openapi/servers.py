"""The base URL of an operation: ``--server``, else the first ``servers`` entry of the
operation, its path item or the document, in that order (OpenAPI's precedence), with its
variables fixed at import (never model arguments), checked against the address policy.

An operation sent to a server of its own (GitHub's release-asset uploads go to
``uploads.github.com``) says so in its file. When that server cannot be used (relative,
a variable without a default, a private address), the operation is skipped with the
reason; the document's own server refuses the import as before (every operation needs it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from compiler.authoring.openapi.document import DocumentFile
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.refs import Target
from compiler.authoring.openapi.schemas import Unexpressible
from compiler.authoring.openapi.sinks import SinkRefused, escaped_server_url
from compiler.checks.url_rules import URL_PRIVATE_ADDRESS
from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy

OPENAPI_NO_SERVER = Code(
    "openapi-no-server", "the document names no server and --server is not given")
OPENAPI_SERVER = Code("openapi-server", "the server URL is not usable")
CODES = (OPENAPI_NO_SERVER, OPENAPI_SERVER)

_VARIABLE = re.compile(r"\{([^{}]*)\}")


def server_url(root: DocumentFile, item: Target, method: str, override: str | None,
               allow_private: bool) -> tuple[str, list[Diagnostic], str | None]:
    """The absolute base URL (no trailing ``/``), any warnings, and a note when the
    operation's own ``servers`` (or its path item's) are used instead of the document's;
    refusals raise. ``--server`` replaces every server, the operations' own included."""
    if override:
        return override.rstrip("/"), [], None
    operation = item.value.get(method)
    for where, holder, own in (((*item.path, method), operation, "operation"),
                               (item.path, item.value, "path item"), ((), root.data, None)):
        servers = holder.get("servers") if isinstance(holder, Mapping) else None
        if isinstance(servers, list) and servers and isinstance(servers[0], Mapping):
            file = item.file if own else root
            url, warnings = _checked(file, (*where, "servers", 0), servers[0], allow_private,
                                     own)
            return url, warnings, _own_note(root, url, own)
    raise ImportRefused((root.error(("servers",) if "servers" in root.data else (),
                                    OPENAPI_NO_SERVER,
                                    "the document names no server: pass --server URL"),))


def _own_note(root: DocumentFile, url: str, own: str | None) -> str | None:
    """What the file says when an operation is sent to a server of its own."""
    if own is None:
        return None
    servers = root.data.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    if isinstance(first, Mapping) and _same_server(root, first, url):
        return None
    return f"sent to {url[:200]!r}, the {own}'s own server (its `servers`), not the document's"


def _same_server(root: DocumentFile, first: Mapping[str, Any], url: str) -> bool:
    try:
        return _checked(root, ("servers", 0), first, True, None)[0] == url
    except ImportRefused:
        return False


def _checked(root: DocumentFile, where: tuple[str | int, ...], server: Mapping[str, Any],
             allow_private: bool, own: str | None) -> tuple[str, list[Diagnostic]]:
    """The server's URL (variables filled, escaped) checked against the address policy;
    an unusable one refuses the import, or for an operation's own server, the operation."""
    try:
        return _checked_url(root, where, server, allow_private)
    except ImportRefused as refused:
        if own is None:
            raise
        raise Unexpressible(f"its {own}'s own server: "
                            f"{refused.diagnostics[0].message}") from None


def _checked_url(root: DocumentFile, where: tuple[str | int, ...], server: Mapping[str, Any],
                 allow_private: bool) -> tuple[str, list[Diagnostic]]:
    written = server.get("url")
    if not isinstance(written, str):
        raise ImportRefused((root.error(where, OPENAPI_SERVER, "a server without a url"),))
    variables = server.get("variables") if isinstance(server.get("variables"), Mapping) else {}

    def fill(match: re.Match[str]) -> str:
        variable = variables.get(match.group(1)) if isinstance(variables, Mapping) else None
        default = variable.get("default") if isinstance(variable, Mapping) else None
        if not isinstance(default, str):
            raise ImportRefused((root.error((*where, "url"), OPENAPI_SERVER,
                                            f"server variable {match.group(1)!r} has no "
                                            "default: pass --server URL"),))
        return default

    url = _VARIABLE.sub(fill, written).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImportRefused((root.error((*where, "url"), OPENAPI_SERVER,
                                        f"server url {url!r} is not an absolute http(s) URL "
                                        "(a relative server needs --server URL)"),))
    try:
        url = escaped_server_url(url)
    except SinkRefused as refused:
        raise ImportRefused((root.error((*where, "url"), OPENAPI_SERVER,
                                        f"server url {url!r}: {refused}; pass --server "
                                        "URL"),)) from None
    refusal = EgressPolicy().refusal_for_host(parts.hostname)
    if refusal is None:
        return url, []
    if refusal.overridable and allow_private:
        return url, [root.warning((*where, "url"), URL_PRIVATE_ADDRESS,
                                  f"{refusal.reason} (allowed by --allow-private-networks)")]
    raise ImportRefused((root.error((*where, "url"), URL_PRIVATE_ADDRESS,
                                    f"server {parts.hostname!r}: {refusal.reason}; pass "
                                    "--server URL (or --allow-private-networks)"),))
