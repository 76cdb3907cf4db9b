"""The base URL of an operation: ``--server``, else the first ``servers`` entry with its
variables fixed at import (never model arguments), checked against the address policy."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from compiler.authoring.openapi.document import DocumentFile
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.sinks import SinkRefused, escaped_server_url
from compiler.checks.url_rules import URL_PRIVATE_ADDRESS
from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy

OPENAPI_NO_SERVER = Code(
    "openapi-no-server", "the document names no server and --server is not given")
OPENAPI_SERVER = Code("openapi-server", "the server URL is not usable")
CODES = (OPENAPI_NO_SERVER, OPENAPI_SERVER)

_VARIABLE = re.compile(r"\{([^{}]*)\}")


def server_url(root: DocumentFile, path: str, method: str, override: str | None,
               allow_private: bool) -> tuple[str, list[Diagnostic]]:
    """The absolute base URL (no trailing ``/``) and any warnings; refusals raise."""
    if override:
        return override.rstrip("/"), []
    data = root.data
    item = data["paths"][path]
    for where, holder in ((("paths", path, method), item.get(method)),
                          (("paths", path), item), ((), data)):
        servers = holder.get("servers") if isinstance(holder, Mapping) else None
        if isinstance(servers, list) and servers and isinstance(servers[0], Mapping):
            return _checked(root, (*where, "servers", 0), servers[0], allow_private)
    raise ImportRefused((root.error(("servers",) if "servers" in data else (),
                                    OPENAPI_NO_SERVER,
                                    "the document names no server: pass --server URL"),))


def _checked(root: DocumentFile, where: tuple[str | int, ...], server: Mapping[str, Any],
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
